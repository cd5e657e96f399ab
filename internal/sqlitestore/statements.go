package sqlitestore

import (
	"context"
	"database/sql"
)

// orderColumns and keyColumns are read in this order by scanOrder and scanKey.
const (
	orderColumns = "id, pet_id, quantity, ship_date, complete, status"
	keyColumns   = "name, plan, per_minute, per_day, prefix, hash, created_at"
)

// statements are the queries of every request, prepared once.
type statements struct {
	ordersVersion                     *sql.Stmt
	listOrders                        *sql.Stmt
	selectOrder                       *sql.Stmt
	cancelOrder                       *sql.Stmt
	selectPet                         *sql.Stmt
	lookupKey                         *sql.Stmt
	findByPet, findByStatus, findByID *sql.Stmt // find.go
}

// prepare prepares the statements; the caller closes them after an error too.
func (s *statements) prepare(ctx context.Context, db *sql.DB) (err error) {
	for _, p := range []struct {
		stmt  **sql.Stmt
		query string
	}{
		{&s.ordersVersion, "SELECT value FROM orders_version"},
		{&s.listOrders, "SELECT " + orderColumns + " FROM orders ORDER BY id"},
		{&s.selectOrder, "SELECT " + orderColumns + " FROM orders WHERE id = ?"},
		{&s.cancelOrder, "UPDATE orders SET status = ? WHERE id = ?"},
		{&s.selectPet, "SELECT name, status FROM pets WHERE id = ?"},
		{&s.lookupKey, "SELECT " + keyColumns + " FROM api_keys WHERE hash = ?"},
		{&s.findByPet, findByPet},
		{&s.findByStatus, findByStatus},
		{&s.findByID, findByID},
	} {
		if *p.stmt, err = db.PrepareContext(ctx, p.query); err != nil {
			return err
		}
	}
	return nil
}

func (s *statements) close() {
	for _, stmt := range []*sql.Stmt{s.ordersVersion, s.listOrders, s.selectOrder, s.cancelOrder, s.selectPet, s.lookupKey,
		s.findByPet, s.findByStatus, s.findByID} {
		if stmt != nil {
			stmt.Close()
		}
	}
}
