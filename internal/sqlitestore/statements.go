package sqlitestore

import (
	"context"
	"database/sql"
)

// orderColumns, keyColumns and eventColumns are read in this order by scanOrder, scanKey and
// scanEvent.
const (
	orderColumns = "id, pet_id, quantity, ship_date, complete, status"
	eventColumns = "id, type, time, order_id, pet_id, quantity, ship_date, complete, status"
	keyColumns   = "name, plan, per_minute, per_day, prefix, hash, created_at"
)

// statements are the queries of every request, prepared once; closing the sql.DB closes them.
type statements struct {
	ordersVersion, listOrders, selectOrder, cancelOrder *sql.Stmt
	selectPet, lookupKey                                *sql.Stmt
	newestEvent, eventBounds, readEvents, isEvent       *sql.Stmt // events.go
}

func (s *statements) prepare(ctx context.Context, db *sql.DB) (err error) {
	for _, p := range []struct {
		stmt  **sql.Stmt
		query string
	}{
		{&s.ordersVersion, ordersVersion},
		{&s.listOrders, "SELECT " + orderColumns + " FROM orders ORDER BY id"},
		{&s.selectOrder, "SELECT " + orderColumns + " FROM orders WHERE id = ?"},
		{&s.cancelOrder, "UPDATE orders SET status = ? WHERE id = ?"},
		{&s.selectPet, "SELECT name, status FROM pets WHERE id = ?"},
		{&s.lookupKey, "SELECT " + keyColumns + " FROM api_keys WHERE hash = ?"},
		{&s.newestEvent, newestEvent},
		{&s.eventBounds, eventBounds},
		{&s.readEvents, readEvents},
		{&s.isEvent, isEvent},
	} {
		if *p.stmt, err = db.PrepareContext(ctx, p.query); err != nil {
			return err
		}
	}
	return nil
}

// ordersVersion moves with every change to the orders, whoever makes it: a change that records
// an event moves the newest event id, which never goes back (newestEventID); a
// DELETE moves orders_version (schema version 5).
const ordersVersion = "SELECT value + " + newestEventID + " FROM orders_version"
