package redis_test

import (
	"context"
	"testing"

	"github.com/petstore/orderd/internal/plan"
	rl "github.com/petstore/orderd/internal/ratelimit/redis"
	"github.com/petstore/orderd/internal/redistest"
)

// BenchmarkAllow is one decision: one round trip to a redis-server on loopback.
func BenchmarkAllow(b *testing.B) {
	rdb := client(b, redistest.Start(b))
	l, err := rl.New(rdb, rl.Options{Prefix: redistest.Prefix(b)})
	if err != nil {
		b.Fatal(err)
	}
	limits := plan.Limits{PerMinute: 1 << 40, PerDay: 1 << 40}
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
