package sqlitestore

import (
	"context"
	"database/sql"
)

// LimitPages makes the file refuse to grow past the pages it has, as a full disk would:
// every connection of db but the pin is closed but one, which gets PRAGMA max_page_count
// (a setting of the connection). Writes that need a new page then fail with SQLITE_FULL.
func LimitPages(ctx context.Context, db *DB) error {
	OneConnection(db)
	_, err := db.sql.ExecContext(ctx, "PRAGMA max_page_count = 1") // SQLite keeps the pages there are
	return err
}

// OneConnection closes every connection of db but the pin and one, which every query then uses.
func OneConnection(db *DB) {
	db.sql.SetMaxIdleConns(0)
	db.sql.SetMaxOpenConns(2) // the pin and one more
	db.sql.SetMaxIdleConns(2)
}

// Fault returns the fault that lasts until a restart, a *order.Fault, or nil.
func (db *DB) Fault() error {
	if f := db.lasting.Load(); f != nil {
		return f
	}
	return nil
}

// QueryRowForTest runs a query on db's file, for tests that look at its schema.
func (db *DB) QueryRowForTest(ctx context.Context, query string) *sql.Row {
	return db.sql.QueryRowContext(ctx, query)
}
