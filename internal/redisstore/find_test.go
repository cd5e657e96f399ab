package redisstore_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/redistest"
)

func TestFindConformance(t *testing.T) {
	rdb := client(t, redistest.Start(t))
	ordertest.RunFind(t, func(tb testing.TB, orders []order.Order) order.Store { return newOrders(tb, rdb, orders) })
}

// TestTheHashesAloneAreTheOrders: orders another writer left in the two hashes only are
// listed and found by the status the hash gives them, and the index sets of the older layout
// (here an ids set without them, and a shipped order left in the pending set) are not read.
func TestTheHashesAloneAreTheOrders(t *testing.T) {
	rdb := client(t, redistest.Start(t))
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	s := emptyOrders(t, rdb, prefix)
	p := "{" + prefix + ":orders}"
	data := `{"petId":7,"quantity":1,"shipDate":"2026-11-20T00:00:00Z","complete":false}`
	if err := rdb.HSet(ctx, p+":data", "5", data, "9223372036854775807", data, "8", data).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(ctx, p+":status", "5", "pending", "9223372036854775807", "shipped", "8", "shipped").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ZAdd(ctx, p+":by-status:pending", redis.Z{Member: "0000000000000000008"}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ZAdd(ctx, p+":ids", redis.Z{Member: "0000000000000000005"}).Err(); err != nil {
		t.Fatal(err)
	}
	view := ordertest.Fresh(s)
	ids := func(f order.Filter) []int64 {
		t.Helper()
		page, err := view.Find(ctx, f, order.PageRequest{Size: 10})
		if err != nil || !page.End {
			t.Fatalf("Find(%+v) = %+v, %v", f, page, err)
		}
		var out []int64
		for _, o := range page.Orders {
			out = append(out, o.ID)
		}
		return out
	}
	if got := ids(order.Filter{}); !slices.Equal(got, []int64{5, 8, math.MaxInt64}) {
		t.Fatalf("every order: %v", got)
	}
	if got := ids(order.Filter{Statuses: []order.Status{order.StatusPending}}); !slices.Equal(got, []int64{5}) {
		t.Fatalf("pending: %v", got)
	}
	if got := ids(order.Filter{Statuses: []order.Status{order.StatusShipped}}); !slices.Equal(got, []int64{8, math.MaxInt64}) {
		t.Fatalf("shipped: %v", got)
	}
}
