package sqlitestore_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/sqlitestore"
)

// TestImport: importing adds new orders, updates the data of existing ones, never changes
// the status of an existing order, and an import that changes nothing leaves the version.
func TestImport(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, newFile(t, nil))
	orders := sqlitestore.NewOrders(db)
	version := func() uint64 {
		t.Helper()
		v, err := orders.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	imp := func(list []order.Order, want sqlitestore.Imported) {
		t.Helper()
		if got, err := db.Import(ctx, list, nil); err != nil || got != want {
			t.Fatalf("Import = %+v, %v; want %+v", got, err, want)
		}
	}
	v0 := version()
	fixture := ordertest.Fixture()
	imp(fixture, sqlitestore.Imported{OrdersAdded: len(fixture)})
	v1 := version()
	if v1 == v0 {
		t.Fatal("the version did not move with the first import")
	}

	imp(fixture, sqlitestore.Imported{})
	if version() != v1 {
		t.Fatal("the version moved with an import that changed nothing")
	}

	if _, changed, err := orders.Cancel(ctx, 1); err != nil || !changed {
		t.Fatalf("Cancel: %v, %v", changed, err)
	}
	v2 := version()
	imp(fixture, sqlitestore.Imported{}) // says pending: the cancel stays
	if version() != v2 {
		t.Fatal("the version moved with a re-import after a cancel")
	}

	next := ordertest.Fixture()
	next[1].Quantity, next[1].Complete = 9, true // the cancelled order's data
	next[2].ShipDate = next[2].ShipDate.Add(1)   // one nanosecond later
	next[3].Status = order.StatusPending         // a status: ignored
	next = append(next, order.Order{ID: 4, PetID: 40, ShipDate: next[0].ShipDate, Status: order.StatusShipped})
	imp(next, sqlitestore.Imported{OrdersAdded: 1, OrdersUpdated: 2})
	if version() == v2 {
		t.Fatal("the version did not move with an import that changed orders")
	}
	want := ordertest.Fixture()
	want[1].Quantity, want[1].Complete, want[1].Status = 9, true, order.StatusCancelled
	want[2].ShipDate = want[2].ShipDate.Add(1)
	want = append(want[:4], append([]order.Order{next[len(next)-1]}, want[4:]...)...)
	got, err := ordertest.Fresh(orders).List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("List = %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ID != w.ID || g.PetID != w.PetID || g.Quantity != w.Quantity || !g.ShipDate.Equal(w.ShipDate) ||
			g.Complete != w.Complete || g.Status != w.Status {
			t.Errorf("order #%d = %+v, want %+v", i, g, w)
		}
	}
}

// TestImportBatchesEqualsTheModel: orders imported in batches that do not fall on the
// statements' bounds, into an empty file (the bulk load, whose indexes and triggers are made
// again) and then again with changes and new orders (rows that exist and rows that do not),
// are what the model says, found by their indexes, with the counts and version of a row at a time.
func TestImportBatchesEqualsTheModel(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, newFile(t, nil))
	orders := sqlitestore.NewOrders(db)
	version := func() uint64 {
		t.Helper()
		v, err := orders.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	events := sqlitestore.NewEvents(db)
	// recorded counts the events after the newest before: the versions move by more than one
	// an event (ids have gaps), so the events are what is counted, one a row.
	recorded := func(after string) int {
		t.Helper()
		n := 0
		for {
			page, err := events.Events(ctx, order.EventQuery{After: after, Limit: 5000})
			if err != nil {
				t.Fatal(err)
			}
			if n += len(page.Events); !page.More {
				return n
			}
			after = page.Last
		}
	}
	newest := func() string {
		t.Helper()
		id, err := events.LastEventID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	first := ordertest.Many(12_001)
	v0, e0 := version(), newest()
	n, err := db.ImportBatches(ctx, order.Slice(first, 777), order.Slice[order.Pet](nil, 1))
	if want := (sqlitestore.Imported{OrdersAdded: len(first)}); err != nil || n != want {
		t.Fatalf("ImportBatches = %+v, %v; want %+v", n, err, want)
	}
	if got := recorded(e0); got != len(first) || version() == v0 {
		t.Fatalf("%d events recorded, want %d: one a row, as the trigger does; the version moved from %d to %d",
			got, len(first), v0, version())
	}
	ordertest.AssertImported(t, orders, first)

	if _, _, err := orders.Cancel(ctx, 0); err != nil {
		t.Fatal(err)
	}
	before := ordertest.Imported(nil, first)
	before[0].Status = order.StatusCancelled
	second, changed := ordertest.Reimport(first)
	v1, e1 := version(), newest()
	n, err = db.ImportBatches(ctx, order.Slice(second, 1234), order.Slice[order.Pet](nil, 1))
	if want := (sqlitestore.Imported{OrdersAdded: 3000, OrdersUpdated: changed}); err != nil || n != want {
		t.Fatalf("second ImportBatches = %+v, %v; want %+v", n, err, want)
	}
	if got := recorded(e1); got != 3000+changed || version() == v1 {
		t.Fatalf("%d events recorded, want %d; the version moved from %d to %d", got, 3000+changed, v1, version())
	}
	ordertest.AssertImported(t, orders, ordertest.Imported(before, second))
}

// TestImportBatchesRefusedLastWritesNothing: a record refused as the batches are written,
// the last of many batches (a file changed since it was checked), leaves the file as it was,
// whether the import was a bulk load or not, and its connection with the tables' CHECKs on.
func TestImportBatchesRefusedLastWritesNothing(t *testing.T) {
	ctx := context.Background()
	for name, held := range map[string][]order.Order{"empty": nil, "not empty": ordertest.Fixture()} {
		t.Run(name, func(t *testing.T) {
			db := mustOpen(t, newFile(t, held))
			sqlitestore.OneConnection(db) // the import's connection is the one queried after it
			orders := sqlitestore.NewOrders(db)
			v0, err := orders.Version(ctx)
			if err != nil {
				t.Fatal(err)
			}
			list := ordertest.Many(11_000)
			list = append(list, list[5]) // a duplicate id, last
			pets := []order.Pet{{ID: 1, Name: "Rex", Status: order.PetSold}}
			_, err = db.ImportBatches(ctx, order.Slice(list, 1000), order.Slice(pets, 1))
			if err == nil || !strings.Contains(err.Error(), "duplicate id") {
				t.Fatalf("ImportBatches: %v; want the duplicate refused", err)
			}
			if v, err := orders.Version(ctx); err != nil || v != v0 {
				t.Fatalf("version %d, %v; want %d", v, err, v0)
			}
			ordertest.AssertImported(t, orders, ordertest.Imported(nil, held))
			if _, err := sqlitestore.NewPets(db).Pet(ctx, 1); !errors.Is(err, order.ErrPetNotFound) {
				t.Fatalf("pet 1: %v; want none", err)
			}
			// The trigger the bulk load dropped is there again: 3 (the version on delete; events).
			var n int
			if err := db.QueryRowForTest(ctx, "SELECT count(*) FROM sqlite_schema WHERE tbl_name = 'orders' AND type IN ('index', 'trigger')").Scan(&n); err != nil || n != 3 {
				t.Fatalf("%d indexes and triggers on orders, %v; want 3", n, err)
			}
			// The refused import's connection has the tables' CHECKs on again.
			err = db.QueryRowForTest(ctx, "INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status) VALUES (99, 0, 0, 'soon', 0, 'pending') RETURNING id").Scan(&n)
			if err == nil || !strings.Contains(err.Error(), "CHECK constraint failed") {
				t.Fatalf("a row against a CHECK, after the refused import: %v; want it refused", err)
			}
		})
	}
}

// TestImportKeepsTheTablesChecks: an import writes with SQLite's CHECKs off (import.go says
// why), so each record Validate passes must meet them, at every edge it admits, added in a
// bulk load and updated; and the import's connection goes back to the pool with them on.
func TestImportKeepsTheTablesChecks(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, newFile(t, nil))
	sqlitestore.OneConnection(db) // the import's connection is the one queried after it
	orders := append(ordertest.Fixture(),
		order.Order{ID: 10, ShipDate: time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), Status: order.StatusPending},
		order.Order{ID: 11, ShipDate: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), Status: order.StatusShipped},
		order.Order{ID: 12, ShipDate: time.Date(2026, 1, 1, 5, 0, 0, 0, time.FixedZone("", 14*3600)), Status: order.StatusCancelled})
	pets := []order.Pet{{ID: 0, Status: order.PetAvailable}, {ID: 1, Name: strings.Repeat("é", order.MaxPetNameLength), Status: order.PetPending},
		{ID: math.MaxInt64, Name: "Rex", Status: order.PetSold}}
	quickCheck := func() {
		t.Helper()
		var got string
		if err := db.QueryRowForTest(ctx, "PRAGMA quick_check").Scan(&got); err != nil || got != "ok" {
			t.Fatalf("quick_check: %q, %v; want ok", got, err)
		}
	}
	if _, err := db.Import(ctx, orders, pets); err != nil {
		t.Fatal(err)
	}
	quickCheck()
	for i := range orders { // every column an update writes, changed
		orders[i].PetID ^= 1
		orders[i].Quantity ^= 1
		orders[i].Complete = !orders[i].Complete
		orders[i].ShipDate = orders[i].ShipDate.Add(time.Duration(1 - 2*(i%2))) // ± 1 ns
	}
	orders[len(orders)-3].ShipDate = orders[len(orders)-3].ShipDate.Add(2)  // not before the year 0
	orders[len(orders)-2].ShipDate = orders[len(orders)-2].ShipDate.Add(-2) // nor after 9999
	for i := range pets {
		pets[i].Name = strings.ToUpper(pets[i].Name)
	}
	if n, err := db.Import(ctx, orders, pets); err != nil || n.OrdersUpdated != len(orders) {
		t.Fatalf("Import: %+v, %v; want %d orders updated", n, err, len(orders))
	}
	quickCheck()
	var id int64
	err := db.QueryRowForTest(ctx, "INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status) VALUES (99, 0, 0, 'soon', 0, 'pending') RETURNING id").Scan(&id)
	if err == nil || !strings.Contains(err.Error(), "CHECK constraint failed") {
		t.Fatalf("a row against a CHECK, after the import: %v; want it refused", err)
	}
}
