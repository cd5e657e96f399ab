package sqlitestore_test

import (
	"context"
	"testing"

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
	got, err := orders.List(ctx)
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
