package ratelimit_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
)

var benchLimits = order.Limits{PerMinute: 1 << 40, PerDay: 1 << 40}

func BenchmarkAllowOneCaller(b *testing.B) {
	l := ratelimit.NewMemory(nil, ratelimit.DefaultBanPolicy)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Allow(context.Background(), "key:one", benchLimits)
		}
	})
}

func BenchmarkAllowManyCallers(b *testing.B) {
	l := ratelimit.NewMemory(nil, ratelimit.DefaultBanPolicy)
	var n atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Allow(context.Background(), "key:"+strconv.FormatInt(n.Add(1)%10_000, 10), benchLimits)
		}
	})
}

// BenchmarkAllowAnonymousPastTheCap: every request is from a new network, with the cap full,
// so each one forgets the least recently seen caller.
func BenchmarkAllowAnonymousPastTheCap(b *testing.B) {
	ids := make([]string, 1<<20)
	for i := range ids {
		ids[i] = ratelimit.AddrCaller(fmt.Sprintf("10.%d.%d.%d", i>>16, (i>>8)&255, i&255), ratelimit.DefaultIPv6Prefix)
	}
	l := ratelimit.NewMemory(nil, ratelimit.DefaultBanPolicy, ratelimit.MaxAnonymous(10_000))
	var n atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Allow(context.Background(), ids[n.Add(1)&(1<<20-1)], benchLimits)
		}
	})
}
