package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/petstore/orderd/internal/order"
)

// Imported counts the rows an Import wrote; rows already as imported are in none.
type Imported struct {
	OrdersAdded, OrdersUpdated int
	PetsAdded, PetsUpdated     int
}

// An import adds new rows and updates those that differ, but never an order's status (it never
// undoes a cancel): one that changes nothing records nothing. OR ROLLBACK: an error undoes the
// whole import, so SQLite need not journal each statement's pages to undo it alone.
const (
	upsertOrders = "INSERT OR ROLLBACK INTO orders (" + orderColumns + ") VALUES %s ON CONFLICT (id) DO UPDATE SET " +
		"pet_id = excluded.pet_id, quantity = excluded.quantity, ship_date = excluded.ship_date, complete = excluded.complete " +
		"WHERE (pet_id, quantity, ship_date, complete) IS NOT (excluded.pet_id, excluded.quantity, excluded.ship_date, excluded.complete)"
	upsertPets = "INSERT OR ROLLBACK INTO pets (id, name, status) VALUES %s ON CONFLICT (id) DO UPDATE SET " +
		"name = excluded.name, status = excluded.status WHERE (name, status) IS NOT (excluded.name, excluded.status)"
)

// rowsPerStatement: a statement a record cost more than the row; 6 × 5000 < 32766 parameters.
const rowsPerStatement = 5000

// Import adds or updates orders and pets in one transaction, except an existing order's
// status, which belongs to the service. Ids must be distinct within each list: a record
// refused writes nothing.
func (db *DB) Import(ctx context.Context, orders []order.Order, pets []order.Pet) (Imported, error) {
	return db.ImportBatches(ctx, order.Slice(orders, rowsPerStatement), order.Slice(pets, rowsPerStatement))
}

// ImportBatches is Import of records read in batches, in one transaction still: a record
// refused (order.CheckEach checks each as it is read) or any error writes nothing.
func (db *DB) ImportBatches(ctx context.Context, orders order.Batches[order.Order], pets order.Batches[order.Pet]) (n Imported, err error) {
	err = db.write(ctx, func(tx *sql.Tx) error {
		// Validate passed every record written, which holds each CHECK (TestImportKeepsTheTablesChecks):
		// SQLite evaluating them again took a large share of the inserts' time. The setting is the
		// connection's: it is undone before the commit or the rollback.
		defer tx.ExecContext(context.WithoutCancel(ctx), "PRAGMA ignore_check_constraints = false")
		recordAdded, err := bulkLoad(ctx, tx)
		if err == nil {
			_, err = tx.ExecContext(ctx, "PRAGMA ignore_check_constraints = true")
		}
		if err != nil {
			return db.fail(ctx, err)
		}
		if n.OrdersAdded, n.OrdersUpdated, err = upsert(ctx, db, tx, "orders", upsertOrders, orders, func(args []any, o order.Order) []any {
			// Validate kept the year to the four digits timestampLayout needs; a bool binds as 0 or 1.
			return append(args, o.ID, o.PetID, int64(o.Quantity), o.ShipDate.UTC().Format(timestampLayout), o.Complete, string(o.Status))
		}); err != nil {
			return err
		}
		if n.PetsAdded, n.PetsUpdated, err = upsert(ctx, db, tx, "pets", upsertPets, pets, func(args []any, p order.Pet) []any {
			return append(args, p.ID, p.Name, string(p.Status))
		}); err != nil || recordAdded == nil {
			return err
		}
		return db.fail(ctx, recordAdded())
	})
	if err != nil {
		return Imported{}, err
	}
	return n, nil
}

// upsert writes the records read into table, rowsPerStatement a statement, and counts the rows
// added (the table's growth) and updated (the other rows changed). SQLite's errors go through
// db.fail; those of reading are returned as they are.
func upsert[T order.Record](ctx context.Context, db *DB, tx *sql.Tx, table, upsert string, read order.Batches[T],
	args func([]any, T) []any) (added, updated int, err error) {
	var before, after, rows int
	var changed int64
	var values []any // of the rows not yet written
	flush := func() error {
		row := "(?" + strings.Repeat(", ?", len(values)/rows-1) + ")"
		res, err := tx.ExecContext(ctx, fmt.Sprintf(upsert, row+strings.Repeat(", "+row, rows-1)), values...)
		if err == nil {
			n, _ := res.RowsAffected() // never fails in modernc.org/sqlite
			changed += n
		}
		values, rows = values[:0], 0
		return db.fail(ctx, err)
	}
	count := func(n *int) error {
		return db.fail(ctx, tx.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(n))
	}
	if err = count(&before); err == nil {
		err = read(order.CheckEach[T](), func(batch []T) error {
			for _, r := range batch {
				if values, rows = args(values, r), rows+1; rows == rowsPerStatement {
					if err := flush(); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	if err == nil && rows > 0 {
		err = flush()
	}
	if err == nil {
		err = count(&after)
	}
	return after - before, int(changed) - (after - before), err
}

// bulkLoad begins an import into an empty orders table: it drops the trigger that records each
// new row's order.created, and returns what records them all after the rows, in one statement,
// and makes the trigger again, in the same transaction. Into a table with rows it returns nil.
func bulkLoad(ctx context.Context, tx *sql.Tx) (recordAdded func() error, err error) {
	if err := tx.QueryRowContext(ctx, "SELECT 1 FROM orders LIMIT 1").Scan(new(int)); !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	var trigger string
	if err := tx.QueryRowContext(ctx, "SELECT sql FROM sqlite_schema WHERE name = 'orders_insert_records_event'").Scan(&trigger); err != nil {
		return nil, fmt.Errorf("the trigger that records new orders: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "DROP TRIGGER orders_insert_records_event"); err != nil {
		return nil, err
	}
	// The first event's id is the trigger's (nextEventID: a log Trim emptied would start at 1
	// again), each next one SQLite's, the newest plus one; all have the statement's time, as the
	// trigger's events of one statement do.
	return func() error {
		_, err := tx.ExecContext(ctx, "INSERT INTO order_events (id, type, time, order_id, pet_id, quantity, ship_date, complete, status) "+
			"SELECT CASE WHEN id = (SELECT min(id) FROM orders) THEN "+nextEventID+" END, 'order.created', "+eventTime+", "+
			orderColumns+" FROM orders ORDER BY id")
		if err == nil {
			_, err = tx.ExecContext(ctx, trigger)
		}
		return err
	}, nil
}
