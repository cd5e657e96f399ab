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
	orderRows := make([][]any, len(orders))
	for i, o := range orders {
		// Validate kept the year to the four digits timestampLayout needs; a bool binds as 0 or 1.
		orderRows[i] = []any{o.ID, o.PetID, int64(o.Quantity), o.ShipDate.UTC().Format(timestampLayout), o.Complete, string(o.Status)}
	}
	tx, done, err := db.beginWrite(ctx)
	if err != nil {
		return Imported{}, err
	}
	defer done()
	var n Imported
	if n.OrdersAdded, n.OrdersUpdated, err = upsert(ctx, tx, "orders", upsertOrder, orderRows); err != nil {
		return Imported{}, db.fail(ctx, err)
	}
	petRows := make([][]any, len(pets))
	for i, p := range pets {
		petRows[i] = []any{p.ID, p.Name, string(p.Status)}
	}
	if n.PetsAdded, n.PetsUpdated, err = upsert(ctx, tx, "pets", upsertPet, petRows); err != nil {
		return Imported{}, db.fail(ctx, err)
	}
	if err := db.commit(tx); err != nil {
		return Imported{}, db.fail(ctx, err)
	}
	return n, nil
}

// upsert runs query for each row and counts the rows added (the table's growth) and updated.
func upsert(ctx context.Context, tx *sql.Tx, table, query string, rows [][]any) (added, updated int, err error) {
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
	for _, row := range rows {
		res, err := stmt.ExecContext(ctx, row...)
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
