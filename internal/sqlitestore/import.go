package sqlitestore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"

	"github.com/petstore/orderd/internal/order"
)

// Imported counts the rows an Import wrote; rows already as imported are in none.
type Imported struct {
	OrdersAdded, OrdersUpdated int
	PetsAdded, PetsUpdated     int
}

// upsert is how an import writes a table: rows of values (columns in order, the id first) go
// to an UPDATE of the rows that exist and differ, then to an INSERT of those that do not.
type upsert struct {
	table, columns string
	set            string // the UPDATE's, of columns v.column1… of the values
	differs        string // true of a row whose values are not the table's
}

// An import updates an order only where it differs, and its status only for a new one: it never
// undoes a cancel, and one that changes nothing leaves the version alone.
var upsertOrders = upsert{
	table: "orders", columns: orderColumns,
	set: "pet_id = v.column2, quantity = v.column3, ship_date = v.column4, complete = v.column5",
	differs: "(orders.pet_id, orders.quantity, orders.ship_date, orders.complete) IS NOT " +
		"(v.column2, v.column3, v.column4, v.column5)",
}

// An imported pet replaces the stored one where it differs.
var upsertPets = upsert{
	table: "pets", columns: "id, name, status",
	set:     "name = v.column2, status = v.column3",
	differs: "(pets.name, pets.status) IS NOT (v.column2, v.column3)",
}

// The statements for rows rows. Not one INSERT … ON CONFLICT DO UPDATE: SQLite journals the
// pages every such statement changes, in case it must undo it alone (a million orders'
// indexes: gigabytes copied). OR ROLLBACK undoes the whole import instead, which is what an
// import does on any error, and needs no such journal.
func (u upsert) statements(rows int) (update, insert string) {
	width := strings.Count(u.columns, ",") + 1
	row := "(?" + strings.Repeat(", ?", width-1) + ")"
	values := row + strings.Repeat(", "+row, rows-1)
	update = fmt.Sprintf("UPDATE OR ROLLBACK %s SET %s FROM (VALUES %s) AS v WHERE %s.id = v.column1 AND %s",
		u.table, u.set, values, u.table, u.differs)
	insert = fmt.Sprintf("INSERT OR ROLLBACK INTO %s (%s) VALUES %s ON CONFLICT (id) DO NOTHING", u.table, u.columns, values)
	return update, insert
}

// rowsPerStatement is how many records one statement writes: one statement a record cost more
// than the row (bench/import.sh). 6 columns × 5000 stays below SQLite's 32766 parameters.
const rowsPerStatement = 5000

// Import adds or updates orders and pets in one transaction, except an existing order's
// status, which belongs to the service. Ids must be distinct within each list.
func (db *DB) Import(ctx context.Context, orders []order.Order, pets []order.Pet) (Imported, error) {
	if err := order.ValidateAll(orders); err != nil {
		return Imported{}, err
	}
	if err := order.ValidateAll(pets); err != nil {
		return Imported{}, err
	}
	return db.ImportBatches(ctx, order.Slice(orders, rowsPerStatement), order.Slice(pets, rowsPerStatement))
}

// ImportBatches is Import of records read in batches, in one transaction still: a record
// refused (order.CheckEach checks each as it is read) or any error writes nothing.
func (db *DB) ImportBatches(ctx context.Context, orders order.Batches[order.Order], pets order.Batches[order.Pet]) (Imported, error) {
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return Imported{}, db.fail(ctx, err)
	}
	defer conn.Close()
	var pages int64 // the connection's cache_size, to restore after the transaction
	if err := conn.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&pages); err != nil {
		return Imported{}, db.fail(ctx, err)
	}
	// Every row written is made from a record Validate passed, which holds each CHECK of the
	// tables (TestImportKeepsTheTablesChecks): SQLite evaluating them again, the ship date's
	// GLOB above all, took 1.6 s of the 4 s a million orders' inserts took.
	if _, err := conn.ExecContext(ctx, "PRAGMA ignore_check_constraints = ON"); err != nil {
		return Imported{}, db.fail(ctx, err)
	}
	defer func() {
		// The connection goes back to the pool as it came; failing that, it is not reused.
		restore := fmt.Sprintf("PRAGMA cache_size = %d; PRAGMA ignore_check_constraints = OFF", pages)
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), restore); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	tx, done, err := db.beginWriteOn(ctx, conn)
	if err != nil {
		return Imported{}, err
	}
	defer done()
	bulk, err := intoEmpty(ctx, tx, "orders")
	if err == nil && bulk == nil {
		// Rows go into indexes all over: with SQLite's 2 MB of cache, most of the time went to
		// writing pages out and reading them back. (A bulk load appends: more would hold its
		// sorts in memory, which SQLite sizes by the cache.)
		_, err = tx.ExecContext(ctx, fmt.Sprintf("PRAGMA cache_size = %d", -importCacheKiB))
	}
	if err != nil {
		return Imported{}, db.fail(ctx, err)
	}
	var n Imported
	if n.OrdersAdded, n.OrdersUpdated, err = write(ctx, db, tx, upsertOrders, bulk != nil, orders, func(args []any, o order.Order) []any {
		// Validate kept the year to the four digits timestampLayout needs; a bool binds as 0 or 1.
		return append(args, o.ID, o.PetID, int64(o.Quantity), o.ShipDate.UTC().Format(timestampLayout), o.Complete, string(o.Status))
	}); err != nil {
		return Imported{}, err
	}
	if n.PetsAdded, n.PetsUpdated, err = write(ctx, db, tx, upsertPets, false, pets, func(args []any, p order.Pet) []any {
		return append(args, p.ID, p.Name, string(p.Status))
	}); err != nil {
		return Imported{}, err
	}
	if bulk != nil {
		if err := bulk.finish(ctx, tx); err != nil {
			return Imported{}, db.fail(ctx, err)
		}
	}
	if err := db.commit(tx); err != nil {
		return Imported{}, db.fail(ctx, err)
	}
	return n, nil
}

// write upserts the records read, rowsPerStatement a statement, and counts the rows added
// and updated; into an empty table (insertOnly), it only inserts. The errors of SQLite go
// through db.fail; those of reading are returned as they are.
func write[T order.Record](ctx context.Context, db *DB, tx *sql.Tx, u upsert, insertOnly bool, read order.Batches[T],
	args func([]any, T) []any) (added, updated int, err error) {
	update, insert := u.statements(rowsPerStatement)
	var full [2]*sql.Stmt
	for i, q := range []string{update, insert} {
		if full[i], err = tx.PrepareContext(ctx, q); err != nil {
			return 0, 0, db.fail(ctx, err)
		}
		defer full[i].Close()
	}
	var values []any // of the rows not yet written
	rows := 0
	flush := func() error {
		for i, count := range []*int{&updated, &added} {
			if i == 0 && insertOnly {
				continue
			}
			var res sql.Result
			var err error
			if rows == rowsPerStatement {
				res, err = full[i].ExecContext(ctx, values...)
			} else {
				update, insert := u.statements(rows)
				res, err = tx.ExecContext(ctx, []string{update, insert}[i], values...)
			}
			if err != nil {
				return db.fail(ctx, err)
			}
			n, _ := res.RowsAffected() // never fails in modernc.org/sqlite
			*count += int(n)
		}
		values, rows = values[:0], 0
		return nil
	}
	err = read(order.CheckEach[T](), func(batch []T) error {
		for _, r := range batch {
			values = args(values, r)
			if rows++; rows == rowsPerStatement {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err == nil && rows > 0 {
		err = flush()
	}
	return added, updated, err
}

// importCacheKiB is the page cache of an import into orders already there (bench/import.sh).
const importCacheKiB = 32 << 10
