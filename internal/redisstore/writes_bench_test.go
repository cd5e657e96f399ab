package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/redistest"
)

// pendingOrders are n pending orders with ids from 0.
func pendingOrders(n int) []order.Order {
	list := make([]order.Order, n)
	for i := range list {
		list[i] = order.Order{ID: int64(i), PetID: int64(i), Quantity: 1, ShipDate: time.Unix(1.8e9, 0), Status: order.StatusPending}
	}
	return list
}

// BenchmarkCancelPending is a cancel that writes (pending to cancelled), one order after
// another; evalsha-µs/op is cancel.lua's time in redis-server.
func BenchmarkCancelPending(b *testing.B) {
	rdb := redistest.Start(b)
	c := benchClient(b, rdb)
	s, err := NewOrders(c, "bench", time.Second)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Import(ctx, pendingOrders(b.N)); err != nil {
		b.Fatal(err)
	}
	e0 := evalshaUsec(b, c)
	b.ResetTimer()
	for i := range b.N {
		if _, changed, err := s.Cancel(ctx, int64(i)); err != nil || !changed {
			b.Fatal(changed, err)
		}
	}
	b.StopTimer()
	b.ReportMetric((evalshaUsec(b, c)-e0)/float64(b.N), "evalsha-µs/op")
}

// BenchmarkImportNew imports 100,000 new orders into an empty Redis; evalsha-µs/order is
// import.lua's time in redis-server, and data-B/order and events-B/order what the data hash
// and the event log hold (MEMORY USAGE) per order.
func BenchmarkImportNew(b *testing.B) {
	const n = 100_000
	orders := pendingOrders(n)
	for b.Loop() {
		b.StopTimer()
		c := benchClient(b, redistest.Start(b))
		s, err := NewOrders(c, "bench", time.Second)
		if err != nil {
			b.Fatal(err)
		}
		e0 := evalshaUsec(b, c)
		b.StartTimer()
		if _, err := s.Import(context.Background(), orders); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		b.ReportMetric((evalshaUsec(b, c)-e0)/n, "evalsha-µs/order")
		for _, k := range []string{s.k.ordersData, s.k.ordersEvents} { // SAMPLES 0: every entry
			size, _ := c.MemoryUsage(context.Background(), k, 0).Result()
			b.ReportMetric(float64(size)/n, k[len("{bench:orders}:"):]+"-B/order")
		}
		b.StartTimer()
	}
}

func benchClient(tb testing.TB, srv *redistest.Server) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, MaxRetries: -1})
	tb.Cleanup(func() { c.Close() })
	return c
}
