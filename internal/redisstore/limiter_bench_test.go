package redisstore_test

import (
	"context"
	"testing"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
)

// BenchmarkAllow is one decision: one round trip to a redis-server on loopback.
func BenchmarkAllow(b *testing.B) {
	rdb := limiterClient(b, redistest.Start(b))
	l, err := redisstore.NewLimiter(rdb, redisstore.LimiterOptions{Prefix: redistest.Prefix(b)})
	if err != nil {
		b.Fatal(err)
	}
	limits := order.Limits{PerMinute: 1 << 40, PerDay: 1 << 40}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := l.Allow(context.Background(), "key:bench", limits); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
