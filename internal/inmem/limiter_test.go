package inmem_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/inmem"
	"github.com/petstore/orderd/internal/plan"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/ratelimit/ratelimittest"
)

func TestLimiterConformance(t *testing.T) {
	ratelimittest.Run(t, func(_ testing.TB, clock func() time.Time, policy ratelimit.BanPolicy) ratelimit.Limiter {
		return inmem.NewLimiter(clock, policy)
	})
}

// TestMemoryIsBoundedByTheDay: callers of a day that is over are forgotten.
func TestMemoryIsBoundedByTheDay(t *testing.T) {
	clock := ratelimittest.NewClock(time.Date(2026, 11, 23, 23, 50, 0, 0, time.UTC))
	l := inmem.NewLimiter(clock.Now, ratelimit.DefaultBanPolicy)
	limits := plan.Limits{PerMinute: 1, PerDay: 1}
	for i := range 10_000 {
		l.Allow(context.Background(), fmt.Sprintf("addr:%d", i), limits)
	}
	l.Allow(context.Background(), "banned", limits)
	for range 40 { // a first 429, then 30 too early: banned past midnight
		l.Allow(context.Background(), "banned", limits)
	}
	if l.Len() != 10_001 {
		t.Fatalf("Len %d", l.Len())
	}
	clock.Set(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
	for i := range 10_000 { // a new day's callers touch every shard
		l.Allow(context.Background(), fmt.Sprintf("new:%d", i), limits)
	}
	if l.Len() != 10_000+1 {
		t.Fatalf("Len %d after midnight; want the new callers and the banned one", l.Len())
	}
}
