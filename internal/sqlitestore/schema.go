package sqlitestore

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
)

// schemaVersion is the file's user_version. schema/N.sql is what version N changed; a file of
// version v runs those of v+1 to schemaVersion, in one transaction (schema_history_test.go has
// the texts each version ran).
const schemaVersion = 7

//go:embed schema/*.sql
var schemaFiles embed.FS

// migrate brings the schema up to date in a write transaction: once, should two processes race.
// A file of a newer schema is refused: this code does not know what the later steps mean.
func (db *DB) migrate(ctx context.Context) error {
	var v int
	version := func(row *sql.Row) error {
		if err := row.Scan(&v); err != nil || v <= schemaVersion {
			return db.fail(ctx, err)
		}
		return fmt.Errorf("%s: schema version %d is newer than this program's %d", db.path, v, schemaVersion)
	}
	if err := version(db.sql.QueryRowContext(ctx, "PRAGMA user_version")); err != nil || v == schemaVersion {
		return err
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		err := version(tx.QueryRowContext(ctx, "PRAGMA user_version"))
		for n := v + 1; n <= schemaVersion && err == nil; n++ {
			var text []byte
			if text, err = schemaFiles.ReadFile(fmt.Sprintf("schema/%d.sql", n)); err == nil {
				_, err = tx.ExecContext(ctx, string(text))
			}
		}
		if err == nil { // PRAGMA takes no parameters; the number is ours
			_, err = tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion))
		}
		return db.fail(ctx, err)
	})
}

// timestampLayout has one width (UTC, nine digits of nanoseconds): text order is time order.
const timestampLayout = "2006-01-02T15:04:05.000000000Z"

// eventTime is SQLite's clock in timestampLayout, to the millisecond; the events of one
// statement share its 'now'.
const eventTime = "strftime('%Y-%m-%dT%H:%M:%f000000Z', 'now')"

// newestEventID is the newest id the log ever gave: its newest row's, or once Trim dropped
// every row, the newest it dropped.
const newestEventID = "(SELECT max(coalesce(max(id), 0), (SELECT last_dropped FROM order_events_cut)) FROM order_events)"

// nextEventID is the id the triggers give (schema/6.sql says why).
const nextEventID = "max(" + newestEventID + " + 1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) * 1000)"
