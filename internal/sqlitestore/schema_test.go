package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
)

// TestFileOfSchema2GainsTheEventLog: a file written before the event log existed gets it on
// open, its orders as they were, and the log starts empty: the next change is its first event.
func TestFileOfSchema2GainsTheEventLog(t *testing.T) {
	ctx := context.Background()
	db := openSchema(t, 2, order7)
	orders, events := NewOrders(db), NewEvents(db)
	if list, err := ordertest.Fresh(orders).List(ctx); err != nil || len(list) != 1 || list[0].ID != 7 {
		t.Fatalf("the orders after migrating: %+v, %v", list, err)
	}
	if page, err := events.Events(ctx, order.EventQuery{Limit: 10}); err != nil || len(page.Events) != 0 || page.Last != "0" {
		t.Fatalf("the log after migrating = %+v, %v; want empty, at 0", page, err)
	}
	if _, _, err := orders.Cancel(ctx, 7); err != nil {
		t.Fatal(err)
	}
	page, err := events.Events(ctx, order.EventQuery{After: "0", Limit: 10})
	if err != nil || len(page.Events) != 1 || page.Events[0].Type != order.EventCancelled || page.Events[0].Order.ID != 7 {
		t.Fatalf("the log after a cancel = %+v, %v; want order 7's order.cancelled", page, err)
	}
}

// TestVersionMovesWithEveryChange: the orders' version moves with every change another process
// makes in plain SQL, an insert, an update and a delete, and with none that changes nothing:
// neither an update to the same values nor a trim of the whole log. A file of schema 4, whose
// triggers moved orders_version on every change, keeps its version or moves it forward when
// it migrates: a version never goes back, or a client's ETag could come back with other orders.
func TestVersionMovesWithEveryChange(t *testing.T) {
	ctx := context.Background()
	// Schema 4's triggers moved orders_version by 3 for these.
	const before = 3
	db := openSchema(t, 4, order7,
		"INSERT INTO orders VALUES (8, 1, 1, '2026-11-20T00:00:00.000000000Z', 0, 'pending')",
		"UPDATE orders SET quantity = 2 WHERE id = 8")
	orders := NewOrders(db)
	version := func() uint64 {
		t.Helper()
		v, err := orders.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	last := version()
	if last < before {
		t.Fatalf("version %d after migrating to schema 5; was %d", last, before)
	}
	// Another process's plain SQL: a connection of its own.
	other, err := sql.Open("sqlite", "file:"+db.path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for _, step := range []struct {
		sql   string
		moves bool
	}{
		{"INSERT INTO orders VALUES (9, 1, 1, '2026-11-20T00:00:00.000000000Z', 0, 'pending')", true},
		{"UPDATE orders SET status = 'shipped' WHERE id = 9", true},
		{"UPDATE orders SET status = 'shipped' WHERE id = 9", false},
		{"UPDATE orders SET quantity = quantity", false},
		{"DELETE FROM orders WHERE id = 9", true},
		{"", false}, // Trim of every event: the log keeps its newest id
		{"UPDATE orders SET complete = 1 WHERE id = 7", true},
	} {
		if step.sql == "" {
			step.sql = "Trim"
			if n, err := NewEvents(db).Trim(ctx, order.Retention{MaxAge: time.Nanosecond}); err != nil || n == 0 {
				t.Fatalf("Trim: %d, %v; want every event dropped", n, err)
			}
		} else if _, err := other.Exec(step.sql); err != nil {
			t.Fatalf("%s: %v", step.sql, err)
		}
		switch v := version(); {
		case step.moves && v <= last:
			t.Errorf("%s: version %d, was %d; want it moved forward", step.sql, v, last)
		case !step.moves && v != last:
			t.Errorf("%s: version %d, was %d; want it kept", step.sql, v, last)
		default:
			last = v
		}
	}
}

// TestCancelWritesTwoPages: a cancel's commit appends about two pages to the WAL: the order's
// row and the event's row. The commit is most of a cancel's time, and each page more is
// measured in the cancels a second; this fails if a schema change adds one (schema 6 wrote
// four: the leaves of orders_by_status the order left and entered; schema 4 six).
func TestCancelWritesTwoPages(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "orderd.db")
	db, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	list := make([]order.Order, 10_000)
	for i := range list {
		list[i] = order.Order{ID: int64(i), ShipDate: time.Unix(1.8e9, 0), Status: order.StatusPending}
	}
	if _, err := db.Import(ctx, list, nil); err != nil {
		t.Fatal(err)
	}
	orders := NewOrders(db)
	if _, _, err := orders.Cancel(ctx, 0); err != nil { // the log's first row
		t.Fatal(err)
	}
	// An empty WAL, which the next 100 commits append to (the automatic checkpoint waits for 1,000 pages).
	if _, err := db.sql.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	const cancels, frame = 100, 24 + 4096 // a WAL frame: its header and a page
	for i := range int64(cancels) {
		if _, changed, err := orders.Cancel(ctx, 1+i*37); err != nil || !changed {
			t.Fatal(changed, err)
		}
	}
	wal, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	pages := float64(wal.Size()-32) / frame / cancels // 32: the WAL's header
	t.Logf("%.2f pages a cancel", pages)
	if pages > 2.5 {
		t.Errorf("a cancel's commit writes %.2f pages of WAL; want at most 2.5", pages)
	}
}

// TestFileOfSchema4KeepsItsEventIDs: the log of a file of schema 4 keeps its events and ids
// when it migrates, and the next id follows the newest ever given, even when Trim had dropped
// every event (schema 4 then had that id in sqlite_sequence only): no id is given twice.
func TestFileOfSchema4KeepsItsEventIDs(t *testing.T) {
	for _, trimmed := range []bool{false, true} {
		t.Run(fmt.Sprintf("trimmed=%v", trimmed), func(t *testing.T) {
			ctx := context.Background()
			steps := []string{order7, "INSERT INTO orders VALUES (8, 1, 1, '2026-11-20T00:00:00.000000000Z', 0, 'pending')",
				"UPDATE orders SET quantity = 2 WHERE id = 8"} // events 1, 2 and 3
			if trimmed { // as schema 4's Trim did
				steps = append(steps, "DELETE FROM order_events WHERE id <= 3", "UPDATE order_events_cut SET last_dropped = 3")
			}
			db := openSchema(t, 4, steps...)
			events := NewEvents(db)
			if id, err := events.LastEventID(ctx); err != nil || id != "3" {
				t.Fatalf("newest id after migrating: %q, %v; want 3", id, err)
			}
			if !trimmed {
				page, err := events.Events(ctx, order.EventQuery{Limit: 10})
				if err != nil || len(page.Events) != 3 || page.Events[0].ID != "1" || page.Events[2].Order.Quantity != 2 {
					t.Fatalf("the log after migrating: %+v, %v; want its 3 events", page, err)
				}
			}
			if _, _, err := NewOrders(db).Cancel(ctx, 7); err != nil {
				t.Fatal(err)
			}
			page, err := events.Events(ctx, order.EventQuery{After: "3", Limit: 10})
			if err != nil || len(page.Events) != 1 || !after(page.Events[0].ID, 3) || page.Events[0].Type != order.EventCancelled {
				t.Fatalf("the log after a cancel: %+v, %v; want one event after 3, order 7's order.cancelled", page, err)
			}
		})
	}
}

// openSchema makes a file of schema version v (the first v migrations) with the statements
// then, as an older orderd left it, and opens it, which migrates it to this code's version.
func openSchema(t *testing.T, v int, then ...string) *DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "orderd.db")
	old, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range append(append(oldMigrations[:v:v], fmt.Sprintf("PRAGMA user_version = %d", v)), then...) {
		if _, err := old.Exec(q); err != nil {
			t.Fatalf("%.40s: %v", q, err)
		}
	}
	old.Close()
	db, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var got int
	if err := db.sql.QueryRow("PRAGMA user_version").Scan(&got); err != nil || got != schemaVersion {
		t.Fatalf("user_version %d, %v after migrating; want %d", got, err, schemaVersion)
	}
	return db
}

// TestFileOfSchema6LosesTheFindIndexes: the indexes of the finds, which nothing reads since
// the orders are served from memory, go when a file of schema 6 migrates; its orders stay.
func TestFileOfSchema6LosesTheFindIndexes(t *testing.T) {
	db := openSchema(t, 6, order7)
	var indexes int
	if err := db.sql.QueryRow("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'orders'").Scan(&indexes); err != nil || indexes != 0 {
		t.Fatalf("%d indexes on orders, %v; want none", indexes, err)
	}
	if list, err := ordertest.Fresh(NewOrders(db)).List(context.Background()); err != nil || len(list) != 1 || list[0].ID != 7 {
		t.Fatalf("the orders after migrating: %+v, %v", list, err)
	}
}

// order7 is an order as a file of any schema holds it.
const order7 = "INSERT INTO orders VALUES (7, 1, 1, '2026-11-20T00:00:00.000000000Z', 0, 'pending')"

// TestBulkImportAfterAnEmptiedLog: an import into an empty orders table, which records its
// events in bulk, follows the newest id ever given, even when Trim emptied the log: no id is
// given twice, and every event of the import is readable after that newest.
func TestBulkImportAfterAnEmptiedLog(t *testing.T) {
	ctx := context.Background()
	db := openSchema(t, len(oldMigrations), order7, "UPDATE orders SET quantity = 2 WHERE id = 7") // two events
	if n, err := NewEvents(db).Trim(ctx, order.Retention{MaxAge: time.Nanosecond}); err != nil || n != 2 {
		t.Fatalf("Trim: %d, %v; want both events dropped", n, err)
	}
	dropped, err := NewEvents(db).LastEventID(ctx) // the newest id, of an event Trim dropped
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.ExecContext(ctx, "DELETE FROM orders"); err != nil { // records no event
		t.Fatal(err)
	}
	list := []order.Order{
		{ID: 3, ShipDate: time.Unix(1.8e9, 0), Status: order.StatusPending},
		{ID: 5, ShipDate: time.Unix(1.8e9, 0), Status: order.StatusShipped},
		{ID: 9, ShipDate: time.Unix(1.8e9, 0), Status: order.StatusPending},
	}
	if _, err := db.Import(ctx, list, nil); err != nil {
		t.Fatal(err)
	}
	page, err := NewEvents(db).Events(ctx, order.EventQuery{After: dropped, Limit: 10})
	if err != nil || len(page.Events) != 3 {
		t.Fatalf("the log after the import: %+v, %v; want its 3 events after %s", page, err, dropped)
	}
	newest, _ := strconv.ParseInt(dropped, 10, 64)
	for i, e := range page.Events {
		if !after(e.ID, newest) || e.Order.ID != list[i].ID || e.Type != order.EventCreated {
			t.Errorf("event %d: id %s, order %d, %s; want an id after %d, order %d created", i, e.ID, e.Order.ID, e.Type, newest, list[i].ID)
		}
		newest, _ = strconv.ParseInt(e.ID, 10, 64)
	}
}

// after reports whether the position id comes after the position p.
func after(id string, p int64) bool {
	n, err := strconv.ParseInt(id, 10, 64)
	return err == nil && n > p
}

// TestRestoredFileGivesNoLostID: a file restored from a backup gives no id again that the
// history it lost gave, so a reader's position from that history stays expired once new events
// pass it, while a position of the restored history reads on to them.
func TestRestoredFileGivesNoLostID(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path, backup := filepath.Join(dir, "orderd.db"), filepath.Join(dir, "backup.db")
	db, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Import(ctx, ordertest.Fixture(), nil); err != nil {
		t.Fatal(err)
	}
	cancel := func(db *DB, id int64) string { // cancels order id, a pending one, and returns its event's id
		t.Helper()
		if _, changed, err := NewOrders(db).Cancel(ctx, id); err != nil || !changed {
			t.Fatalf("cancel %d: %v, %v", id, changed, err)
		}
		last, err := NewEvents(db).LastEventID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return last
	}
	kept := cancel(db, 0)
	if _, err := db.sql.ExecContext(ctx, "VACUUM INTO ?", backup); err != nil {
		t.Fatal(err)
	}
	lost := cancel(db, 1) // a reader's position, of the history the restore loses
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(backup, path); err != nil { // as an operator restores, the server stopped
		t.Fatal(err)
	}
	// A restore takes longer than this: ids come from the clock's milliseconds.
	lostAt, _ := strconv.ParseInt(lost, 10, 64)
	for time.Now().UnixMilli() <= lostAt/1000 {
		time.Sleep(time.Millisecond)
	}
	db, err = Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if newest := cancel(db, 1); !after(newest, lostAt) {
		t.Fatalf("the restored file's next event is %s; want one after every id the lost history gave (%s)", newest, lost)
	}
	if page, err := NewEvents(db).Events(ctx, order.EventQuery{After: lost, Limit: 10}); !errors.Is(err, order.ErrEventsExpired) {
		t.Fatalf("after %s, a position of the lost history: %+v, %v; want ErrEventsExpired", lost, page, err)
	}
	page, err := NewEvents(db).Events(ctx, order.EventQuery{After: kept, Limit: 10})
	if err != nil || len(page.Events) != 1 || page.Events[0].Type != order.EventCancelled || page.Events[0].Order.ID != 1 {
		t.Fatalf("after %s, a position of the restored history: %+v, %v; want the new cancel of order 1", kept, page, err)
	}
}

// TestEveryOldSchemaMigratesToTheNewOne: a file of each older version, once opened, has the
// tables, columns, indexes and triggers of a file this version makes.
func TestEveryOldSchemaMigratesToTheNewOne(t *testing.T) {
	shape := func(db *DB) string {
		t.Helper()
		const q = `SELECT group_concat(line, char(10)) FROM (
			SELECT s.type || ' ' || s.name || ': ' || CASE WHEN s.type = 'table' THEN
				(SELECT group_concat(c.name || ' ' || c.type || ' ' || c."notnull" || ' ' || c.pk || ' ' || coalesce(c.dflt_value, ''), ', ')
				 FROM pragma_table_info(s.name) c) ELSE coalesce(s.sql, '') END AS line
			FROM sqlite_schema s WHERE s.name NOT LIKE 'sqlite_%' ORDER BY s.type, s.name)`
		var got string
		if err := db.sql.QueryRow(q).Scan(&got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := shape(openSchema(t, 0))
	for v := 1; v < schemaVersion; v++ {
		if got := shape(openSchema(t, v, order7)); got != want {
			t.Errorf("a file of schema %d, migrated:\n%s\nwant, as a new file:\n%s", v, got, want)
		}
	}
}
