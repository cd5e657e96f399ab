package redisstore_test

import (
	"context"
	"slices"
	"testing"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
)

// TestImportBatchesEqualsTheModel: orders imported in batches of several import.lua chunks
// in a pipeline, then again with changes and new orders after the scripts were flushed
// (NOSCRIPT: sent again with their source), are what the model says, with import.lua's count
// of fields changed, beside orders another writer created or changed; and the import writes
// none of the older layout's index sets.
func TestImportBatchesEqualsTheModel(t *testing.T) {
	rdb := client(t, redistest.Start(t))
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	s := emptyOrders(t, rdb, prefix)
	first := ordertest.Many(12_001)
	n, err := s.ImportBatches(ctx, order.Slice(first, 4321))
	if want := int64(2 * len(first)); err != nil || n != want { // data and status of each
		t.Fatalf("ImportBatches = %d, %v; want %d", n, err, want)
	}
	ordertest.AssertImported(t, s, first)

	if _, _, err := s.Cancel(ctx, 0); err != nil {
		t.Fatal(err)
	}
	before := ordertest.Imported(nil, first)
	before[0].Status = order.StatusCancelled
	second, changed := ordertest.Reimport(first)
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// Another writer's: order 3 of the file cancelled and order 2 created.
	created := order.Order{ID: 2, PetID: 7, ShipDate: first[0].ShipDate, Status: order.StatusPending}
	if err := rdb.HSet(ctx, "{"+prefix+":orders}:status", "3", "cancelled", "2", "pending").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(ctx, "{"+prefix+":orders}:data", "2", `{"petId":7,"quantity":0,"shipDate":"2026-01-01T00:00:00Z","complete":false}`).Err(); err != nil {
		t.Fatal(err)
	}
	before[1].Status = order.StatusCancelled
	before = append(before, created)
	n, err = s.ImportBatches(ctx, order.Slice(second, 2500))
	if want := int64(changed + 2*3000); err != nil || n != want {
		t.Fatalf("second ImportBatches = %d, %v; want %d", n, err, want)
	}
	ordertest.AssertImported(t, s, ordertest.Imported(before, second))
	p := "{" + prefix + ":orders}"
	if n, err := rdb.Exists(ctx, p+":ids", p+":by-status:pending", p+":by-status:shipped", p+":by-status:cancelled").Result(); err != nil || n != 0 {
		t.Fatalf("%d index sets of the older layout written (%v)", n, err)
	}
}

func version(t *testing.T, s *redisstore.Orders) uint64 {
	t.Helper()
	v, err := s.Version(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestImportFillsEmptyHalves: an order another writer left with an empty data or status
// (which the layout counts as none) is imported as a new one: the file's data, its status
// where it had none, found, and logged as order.created.
func TestImportFillsEmptyHalves(t *testing.T) {
	rdb := client(t, redistest.Start(t))
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	s := emptyOrders(t, rdb, prefix)
	orders := ordertest.Many(4)
	p := "{" + prefix + ":orders}"
	rdb.HSet(ctx, p+":data", orders[0].ID, "")
	rdb.HSet(ctx, p+":status", orders[0].ID, "")
	rdb.HSet(ctx, p+":data", orders[1].ID, "")
	rdb.HSet(ctx, p+":status", orders[1].ID, string(order.StatusCancelled))
	if _, err := s.Import(ctx, orders); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(orders)
	want[1].Status = order.StatusCancelled // a status is never replaced
	ordertest.AssertImported(t, s, want)
	events, err := rdb.XRange(ctx, p+":events", "-", "+").Result()
	if err != nil || len(events) != len(orders) {
		t.Fatalf("%d events, %v; want %d", len(events), err, len(orders))
	}
	for _, e := range events {
		if e.Values["type"] != "order.created" {
			t.Errorf("event %v; want order.created for each", e.Values)
		}
	}
}
