package inmem_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/petstore/orderd/internal/inmem"
	"github.com/petstore/orderd/internal/plan"
	"github.com/petstore/orderd/internal/ratelimit"
)

var benchLimits = plan.Limits{PerMinute: 1 << 40, PerDay: 1 << 40}

func BenchmarkAllowOneCaller(b *testing.B) {
	l := inmem.NewLimiter(nil, ratelimit.DefaultBanPolicy)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Allow(context.Background(), "key:one", benchLimits)
		}
	})
}

func BenchmarkAllowManyCallers(b *testing.B) {
	l := inmem.NewLimiter(nil, ratelimit.DefaultBanPolicy)
	var n atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Allow(context.Background(), "key:"+strconv.FormatInt(n.Add(1)%10_000, 10), benchLimits)
		}
	})
}
