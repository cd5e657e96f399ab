package sqlitestore

import (
	"context"
	"database/sql"

	"github.com/petstore/orderd/internal/order"
)

// Imported counts the rows an Import wrote; rows already as imported are in none.
type Imported struct {
	OrdersAdded, OrdersUpdated int
	PetsAdded, PetsUpdated     int
}

// An import updates an order only where it differs, and its status only for a new one: it never
// undoes a cancel, and one that changes nothing leaves the version alone.
const upsertOrder = `
INSERT INTO orders (` + orderColumns + `) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
	pet_id = excluded.pet_id, quantity = excluded.quantity,
	ship_date = excluded.ship_date, complete = excluded.complete
WHERE (pet_id, quantity, ship_date, complete) IS NOT
	(excluded.pet_id, excluded.quantity, excluded.ship_date, excluded.complete)`

// An imported pet replaces the stored one where it differs.
const upsertPet = `
INSERT INTO pets (id, name, status) VALUES (?, ?, ?)
ON CONFLICT (id) DO UPDATE SET name = excluded.name, status = excluded.status
WHERE (name, status) IS NOT (excluded.name, excluded.status)`

// Import adds or updates orders and pets in one transaction, except an existing order's
// status, which belongs to the service. Ids must be distinct within each list.
func (db *DB) Import(ctx context.Context, orders []order.Order, pets []order.Pet) (Imported, error) {
	if err := order.ValidateAll(orders); err != nil {
		return Imported{}, err
	}
	if err := order.ValidateAll(pets); err != nil {
		return Imported{}, err
	}
	tx, done, err := db.beginWrite(ctx)
	if err != nil {
		return Imported{}, err
	}
	defer done()
	var n Imported
	if n.OrdersAdded, n.OrdersUpdated, err = upsert(ctx, tx, "orders", upsertOrder, orders, func(o order.Order) []any {
		// Validate kept the year to the four digits timestampLayout needs; a bool binds as 0 or 1.
		return []any{o.ID, o.PetID, int64(o.Quantity), o.ShipDate.UTC().Format(timestampLayout), o.Complete, string(o.Status)}
	}); err != nil {
		return Imported{}, db.fail(ctx, err)
	}
	if n.PetsAdded, n.PetsUpdated, err = upsert(ctx, tx, "pets", upsertPet, pets, func(p order.Pet) []any {
		return []any{p.ID, p.Name, string(p.Status)}
	}); err != nil {
		return Imported{}, db.fail(ctx, err)
	}
	if err := db.commit(tx); err != nil {
		return Imported{}, db.fail(ctx, err)
	}
	return n, nil
}

// upsert runs query with the args of each item and counts the rows added (the table's growth) and updated.
func upsert[T any](ctx context.Context, tx *sql.Tx, table, query string, items []T, args func(T) []any) (added, updated int, err error) {
	count := func() (n int, err error) {
		err = tx.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n)
		return n, err
	}
	before, err := count()
	if err != nil {
		return 0, 0, err
	}
	stmt, err := tx.PrepareContext(ctx, query)
	if err != nil {
		return 0, 0, err
	}
	defer stmt.Close()
	written := 0
	for _, item := range items {
		res, err := stmt.ExecContext(ctx, args(item)...)
		if err != nil {
			return 0, 0, err
		}
		n, _ := res.RowsAffected() // never fails in modernc.org/sqlite
		written += int(n)
	}
	after, err := count()
	if err != nil {
		return 0, 0, err
	}
	return after - before, written - (after - before), nil
}
