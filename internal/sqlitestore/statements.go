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

// statements are the queries of every request, prepared once; closing the sql.DB closes them.
type statements struct {
	ordersVersion, listOrders, selectOrder, cancelOrder *sql.Stmt
	selectPet, lookupKey                                *sql.Stmt
	findByPet, findByStatus, findByID                   *sql.Stmt // find.go
}

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
