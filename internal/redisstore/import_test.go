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
// (NOSCRIPT: sent again with their source), are what the model says, found by the indexes
// import.lua and Reindex keep (also where another writer left orders unindexed), with
// import.lua's count of fields changed, and an order another writer cancelled moved out of the
// shipped set.
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
	// Another writer's: order 3 of the file shipped and order 2 created, neither indexed.
	// import.lua places the first, Reindex (of what the file does not hold) the second.
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
	// A stale entry costs a find only a look, so the sets are read: order 3 left shipped's.
	for state, want := range map[string]bool{"shipped": false, "cancelled": true} {
		err := rdb.ZScore(ctx, "{"+prefix+":orders}:by-status:"+state, "0000000000000000003").Err()
		if in := err == nil; in != want {
			t.Errorf("order 3 in the %s set: %v (%v), want %v", state, in, err, want)
		}
	}
}

// TestReindexMovesWhatIsOutOfPlace: Reindex, over several HSCANs, puts back in place index
// entries another writer left wrong, moving the version, as what v1's list and the finds read
// changed; and moves nothing, the version neither, the second time.
func TestReindexMovesWhatIsOutOfPlace(t *testing.T) {
	rdb := client(t, redistest.Start(t))
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	orders := ordertest.Many(20_000)
	s := emptyOrders(t, rdb, prefix)
	if _, err := s.Import(ctx, orders); err != nil {
		t.Fatal(err)
	}
	// A shipping system that set statuses without moving the index entries.
	for _, id := range []string{"3", "6", "9"} {
		if err := rdb.HSet(ctx, "{"+prefix+":orders}:status", id, "shipped").Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.Del(ctx, "{"+prefix+":orders}:ids").Err(); err != nil {
		t.Fatal(err)
	}
	before := version(t, s)
	moved, err := s.Reindex(ctx)
	// Every id back in ids; 3 was shipped already; 6 (cancelled) and 9 (pending) move out of
	// one set, into another.
	if want := int64(len(orders) + 4); err != nil || moved != want {
		t.Fatalf("Reindex moved %d, %v; want %d", moved, err, want)
	}
	want := ordertest.Imported(nil, orders)
	want[2].Status, want[3].Status = order.StatusShipped, order.StatusShipped
	ordertest.AssertImported(t, s, want)
	after := version(t, s)
	if after == before {
		t.Fatal("Reindex put every order back in the list, and the version stayed: caches keep the list without them")
	}
	if moved, err := s.Reindex(ctx); err != nil || moved != 0 || version(t, s) != after {
		t.Fatalf("second Reindex moved %d, %v; want none, and the version as it was", moved, err)
	}
}

// TestAnImportThatOnlyIndexesMovesTheVersion: orders another writer stored without their
// index entries are not in the list; importing them as they are changes no order, but puts
// them in the list, so the version moves (caches keyed on it rebuild); once more, it stays.
func TestAnImportThatOnlyIndexesMovesTheVersion(t *testing.T) {
	rdb := client(t, redistest.Start(t))
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	orders := ordertest.Many(10)
	s := emptyOrders(t, rdb, prefix)
	if _, err := s.Import(ctx, orders); err != nil {
		t.Fatal(err)
	}
	p := "{" + prefix + ":orders}"
	if err := rdb.Del(ctx, p+":ids", p+":by-status:pending", p+":by-status:shipped", p+":by-status:cancelled").Err(); err != nil {
		t.Fatal(err)
	}
	before := version(t, s)
	if changed, err := s.Import(ctx, orders); err != nil || changed != 0 {
		t.Fatalf("Import = %d, %v; want no order field changed", changed, err)
	}
	after := version(t, s)
	if after == before {
		t.Fatal("the import put every order back in the list, and the version stayed: caches keep the list without them")
	}
	ordertest.AssertImported(t, s, ordertest.Imported(nil, orders))
	if _, err := s.Import(ctx, orders); err != nil || version(t, s) != after {
		t.Fatalf("the same import again: %v; want the version as it was", err)
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
// where it had none, indexed, found, and logged as order.created.
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
