package sqlitestore

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/petstore/orderd/internal/order"
)

// TestFileOfSchema2GainsTheEventLog: a file written before the event log existed gets it on
// open, its orders as they were, and the log starts empty: the next change is its first event.
func TestFileOfSchema2GainsTheEventLog(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "orderd.db")
	old, err := sql.Open("sqlite", dsn(path, 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{migrations[0], migrations[1], "PRAGMA user_version = 2",
		"INSERT INTO orders VALUES (7, 1, 1, '2026-11-20T00:00:00.000000000Z', 0, 'pending')"} {
		if _, err := old.Exec(q); err != nil {
			t.Fatalf("%.40s: %v", q, err)
		}
	}
	old.Close()

	db, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.sql.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != len(migrations) {
		t.Fatalf("user_version %d, %v; want %d", v, err, len(migrations))
	}
	orders, events := NewOrders(db), NewEvents(db)
	if list, err := orders.List(ctx); err != nil || len(list) != 1 || list[0].ID != 7 {
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
