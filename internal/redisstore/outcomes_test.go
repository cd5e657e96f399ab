package redisstore_test

import (
	"context"
	"crypto/rand"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
)

// commandCounter counts the commands a client sends, alone or in pipelines.
type commandCounter struct{ n atomic.Int64 }

func (c *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// cancelling is one instance's order store, its View and its limiter on a shared Redis; the
// order store's client counts what it sends.
type cancelling struct {
	orders  *redisstore.Orders
	view    *order.View // of orders, as the instance's requests read them
	limiter *redisstore.Limiter
	sent    *commandCounter
}

func newCancelling(t *testing.T, srv *redistest.Server, prefix string) cancelling {
	t.Helper()
	in := cancelling{sent: &commandCounter{}}
	rdb := client(t, srv)
	rdb.AddHook(in.sent)
	var err error
	if in.orders, err = redisstore.NewOrders(rdb, prefix, time.Second); err != nil {
		t.Fatal(err)
	}
	in.view = order.NewView(in.orders)
	if in.limiter, err = redisstore.NewLimiter(client(t, srv), redisstore.LimiterOptions{Prefix: prefix}); err != nil {
		t.Fatal(err)
	}
	// The round trip carries the versions only when both data sets have a generation: a
	// deployment whose requests reach a cancel has keys.
	keys, _ := redisstore.NewKeys(client(t, srv), prefix, time.Second)
	_, rec, err := order.NewKey("canceller", order.Pro, order.Limits{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := keys.Add(context.Background(), rec); err != nil && !errors.Is(err, order.ErrNameTaken) {
		t.Fatal(err)
	}
	return in
}

// cancelResult is what one cancel answered, and how many commands the order store sent for it.
type cancelResult struct {
	order   order.Order
	changed bool
	err     error
	sent    int64
}

// request cancels id as a request does: within a Trip, after the limiter's round trip.
func (in cancelling) request(t *testing.T, id int64) cancelResult {
	t.Helper()
	ctx := order.Begin(context.Background())
	if d, err := in.limiter.Allow(ctx, "addr:192.0.2.1", order.Limits{PerMinute: 1 << 30, PerDay: 1 << 30}); err != nil || !d.Allowed {
		t.Fatalf("Allow = %+v, %v", d, err)
	}
	return in.cancel(ctx, id)
}

func (in cancelling) cancel(ctx context.Context, id int64) cancelResult {
	before := in.sent.n.Load()
	o, changed, err := in.view.Cancel(ctx, id)
	return cancelResult{o, changed, err, in.sent.n.Load() - before}
}

// fixtureOrder is the fixture's order with id.
func fixtureOrder(t *testing.T, id int64) order.Order {
	t.Helper()
	for _, o := range ordertest.Fixture() {
		if o.ID == id {
			return o
		}
	}
	t.Fatalf("no order %d in the fixture", id)
	return order.Order{}
}

func newPending(id int64) order.Order {
	return order.Order{ID: id, PetID: 7, Quantity: 1, ShipDate: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC), Status: order.StatusPending}
}

// wantRefused checks a cancel refused with want (order.ErrNotFound, or
// order.ErrAlreadyShipped with o), sending fromMemory's worth: none, or some.
func wantRefused(t *testing.T, what string, r cancelResult, want error, o order.Order, fromMemory bool) {
	t.Helper()
	if !errors.Is(r.err, want) || r.changed || r.order != o {
		t.Fatalf("%s: %+v, %v, %v; want %+v, %v", what, r.order, r.changed, r.err, o, want)
	}
	if fromMemory != (r.sent == 0) {
		t.Fatalf("%s: the order store sent %d commands; answered from memory: want %v", what, r.sent, fromMemory)
	}
}

// TestCancelThatChangesNothingIsAnsweredAtItsVersion: a cancel of an unknown, shipped or
// cancelled order is answered from the View without a command while the orders' version
// that the request's round trip read is the one the View is at; any write by another
// instance moves the version, and the next cancel on this one answers what Redis holds.
func TestCancelThatChangesNothingIsAnsweredAtItsVersion(t *testing.T) {
	srv := redistest.Start(t)
	prefix := redistest.Prefix(t)
	there := ordersWithPrefix(t, client(t, srv), prefix)
	here := newCancelling(t, srv, prefix)
	ctx := context.Background()
	shipped := fixtureOrder(t, 2)
	cancelled := fixtureOrder(t, 3)

	t.Run("Unchanged", func(t *testing.T) {
		wantRefused(t, "unknown, first", here.request(t, 4242), order.ErrNotFound, order.Order{}, false) // the View loads
		wantRefused(t, "unknown, again", here.request(t, 4242), order.ErrNotFound, order.Order{}, true)
		wantRefused(t, "shipped", here.request(t, 2), order.ErrAlreadyShipped, shipped, true)
		for i, fromMemory := range []bool{true, true} {
			if r := here.request(t, 3); r.err != nil || r.changed || r.order != cancelled || fromMemory != (r.sent == 0) {
				t.Fatalf("cancelled, %d: %+v, %v, %v, %d commands; want it unchanged", i, r.order, r.changed, r.err, r.sent)
			}
		}
	})

	t.Run("ImportedThere", func(t *testing.T) {
		const id = 5001
		wantRefused(t, "unknown", here.request(t, id), order.ErrNotFound, order.Order{}, true)
		if _, err := there.Import(ctx, []order.Order{newPending(id)}); err != nil {
			t.Fatal(err)
		}
		want := newPending(id)
		want.Status = order.StatusCancelled
		if r := here.request(t, id); r.err != nil || !r.changed || r.order != want {
			t.Fatalf("after the import there: %+v, %v, %v; want it cancelled now", r.order, r.changed, r.err)
		}
		// The cancel moved the version: the View reads its event, then answers from memory.
		for i, fromMemory := range []bool{false, true} {
			if r := here.request(t, id); r.err != nil || r.changed || r.order != want || fromMemory != (r.sent == 0) {
				t.Fatalf("again, %d: %+v, %v, %v, %d commands; want it unchanged", i, r.order, r.changed, r.err, r.sent)
			}
		}
	})

	t.Run("ImportedAndCancelledThere", func(t *testing.T) {
		const id = 5002
		wantRefused(t, "unknown", here.request(t, id), order.ErrNotFound, order.Order{}, true)
		if _, err := there.Import(ctx, []order.Order{newPending(id)}); err != nil {
			t.Fatal(err)
		}
		if _, changed, err := there.Cancel(ctx, id); err != nil || !changed {
			t.Fatalf("cancel there: %v, %v", changed, err)
		}
		want := newPending(id)
		want.Status = order.StatusCancelled
		if r := here.request(t, id); r.err != nil || r.changed || r.order != want {
			t.Fatalf("after the cancel there: %+v, %v, %v; want it already cancelled", r.order, r.changed, r.err)
		}
	})

	t.Run("UnrelatedChange", func(t *testing.T) {
		const id = 5003
		wantRefused(t, "unknown", here.request(t, id), order.ErrNotFound, order.Order{}, true)
		wantRefused(t, "shipped", here.request(t, 2), order.ErrAlreadyShipped, shipped, true)
		if _, changed, err := there.Cancel(ctx, 1); err != nil || !changed {
			t.Fatalf("cancel of order 1 there: %v, %v", changed, err)
		}
		// Another version: the View reads the change, then answers at that version.
		wantRefused(t, "unknown, after", here.request(t, id), order.ErrNotFound, order.Order{}, false)
		wantRefused(t, "shipped, after", here.request(t, 2), order.ErrAlreadyShipped, shipped, true)
		wantRefused(t, "unknown, kept again", here.request(t, id), order.ErrNotFound, order.Order{}, true)
		wantRefused(t, "shipped, kept again", here.request(t, 2), order.ErrAlreadyShipped, shipped, true)
	})

	// Redis lost a write (a failover to a replica that lagged: the counter one back), then
	// took one: the counter is back at the number the cache was kept at, with another
	// generation and another state.
	t.Run("SameCounterAnotherGeneration", func(t *testing.T) {
		const id = 5004
		wantRefused(t, "unknown", here.request(t, id), order.ErrNotFound, order.Order{}, true)
		p := "{" + prefix + ":orders}"
		rdb := client(t, srv)
		counter := rdb.Get(ctx, p+":version").Val()
		rdb.Decr(ctx, p+":version")
		if _, err := there.Import(ctx, []order.Order{newPending(id)}); err != nil {
			t.Fatal(err)
		}
		if rdb.Get(ctx, p+":version").Val() != counter {
			t.Fatal("the counter did not come back to the same number")
		}
		if r := here.request(t, id); r.err != nil || !r.changed {
			t.Fatalf("after the import: %+v, %v, %v; want it cancelled now", r.order, r.changed, r.err)
		}
	})

	// A write no cancel foresees, but made as docs/redis-layout.md says (its event, the
	// version and the generation with it): a shipped order back to pending. It is cancelled
	// at the next request.
	t.Run("ShippedOrderUnshipped", func(t *testing.T) {
		here.request(t, 2) // the View follows the subtests before
		wantRefused(t, "shipped, kept", here.request(t, 2), order.ErrAlreadyShipped, shipped, true)
		p := "{" + prefix + ":orders}"
		rdb := client(t, srv)
		_, err := rdb.TxPipelined(ctx, func(tx redis.Pipeliner) error {
			tx.XAdd(ctx, &redis.XAddArgs{Stream: p + ":events", Values: []any{"type", "order.updated", "id", "2",
				"data", rdb.HGet(ctx, p+":data", "2").Val(), "status", "pending"}})
			tx.HSet(ctx, p+":status", "2", "pending")
			tx.Incr(ctx, p+":version")
			tx.Set(ctx, p+":generation", rand.Text(), 0)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := shipped
		want.Status = order.StatusCancelled
		if r := here.request(t, 2); r.err != nil || !r.changed || r.order != want {
			t.Fatalf("after it was unshipped: %+v, %v, %v; want it cancelled now", r.order, r.changed, r.err)
		}
	})
}

// TestCancelWithoutACarriedVersionAsksRedis: the View answers a cancel only at the version read
// in the request's own round trip. A call outside a request, or within one whose limiter's
// fallback decided (no round trip, so no version read), reads the version from Redis.
func TestCancelWithoutACarriedVersionAsksRedis(t *testing.T) {
	srv := redistest.Start(t)
	prefix := redistest.Prefix(t)
	there := ordersWithPrefix(t, client(t, srv), prefix)
	here := newCancelling(t, srv, prefix)
	ctx := context.Background()
	unreachable := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 100 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { unreachable.Close() })
	var fallbacks atomic.Int64
	down, err := redisstore.NewLimiter(unreachable, redisstore.LimiterOptions{Prefix: prefix, Timeout: time.Second,
		Fallback: ratelimit.NewMemory(nil, ratelimit.DefaultBanPolicy), RetryEvery: time.Hour, OnFallback: func() { fallbacks.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		id   int64
		ctx  func(t *testing.T) context.Context
	}{
		{"NoTrip", 6001, func(*testing.T) context.Context { return ctx }},
		{"FallbackDecided", 6002, func(t *testing.T) context.Context {
			tctx := order.Begin(ctx)
			before := fallbacks.Load()
			if d, err := down.Allow(tctx, "addr:192.0.2.1", order.Limits{PerMinute: 100, PerDay: 100}); err != nil || !d.Allowed || fallbacks.Load() != before+1 {
				t.Fatalf("Allow = %+v, %v; want the fallback's decision", d, err)
			}
			return tctx
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			here.request(t, tc.id) // the View catches up with what the subtest before changed
			wantRefused(t, "unknown, kept", here.request(t, tc.id), order.ErrNotFound, order.Order{}, true)
			if r := here.cancel(tc.ctx(t), tc.id); r.sent == 0 {
				t.Fatalf("%+v, %v, %v from memory; want cancel.lua", r.order, r.changed, r.err)
			}
			if _, err := there.Import(ctx, []order.Order{newPending(tc.id)}); err != nil {
				t.Fatal(err)
			}
			want := newPending(tc.id)
			want.Status = order.StatusCancelled
			if r := here.cancel(tc.ctx(t), tc.id); r.err != nil || !r.changed || r.order != want {
				t.Fatalf("after the import there: %+v, %v, %v; want it cancelled now", r.order, r.changed, r.err)
			}
		})
	}
}
