package ratelimit_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/ratelimit/ratelimittest"
)

func TestLimiterConformance(t *testing.T) {
	ratelimittest.Run(t, func(_ testing.TB, clock func() time.Time, policy ratelimit.BanPolicy) ratelimit.Limiter {
		return ratelimit.NewMemory(clock, policy)
	})
}

// TestMemoryIsBoundedByTheDay: callers of a day that is over are forgotten.
func TestMemoryIsBoundedByTheDay(t *testing.T) {
	clock := ratelimittest.NewClock(time.Date(2026, 11, 23, 23, 50, 0, 0, time.UTC))
	l := ratelimit.NewMemory(clock.Now, ratelimit.DefaultBanPolicy)
	limits := order.Limits{PerMinute: 1, PerDay: 1}
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
	for i := range 10_000 { // a new day: its first request sweeps the old one
		l.Allow(context.Background(), fmt.Sprintf("new:%d", i), limits)
	}
	if l.Len() != 10_000+1 {
		t.Fatalf("Len %d after midnight; want the new callers and the banned one", l.Len())
	}
}

// TestAnonymousCallersAreCapped: past the cap the least recently seen anonymous callers are
// forgotten, each forgetting counted; callers with a key, and anonymous callers seen again
// and again, are kept.
func TestAnonymousCallersAreCapped(t *testing.T) {
	clock := ratelimittest.NewClock(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	var forgotten atomic.Int64
	l := ratelimit.NewMemory(clock.Now, ratelimit.BanPolicy{}, ratelimit.MaxAnonymous(640), ratelimit.OnForget(func() { forgotten.Add(1) }))
	ctx := context.Background()
	limits := order.Limits{PerMinute: 2, PerDay: 100}
	keyed, busy := ratelimit.KeyCaller("k"), ratelimit.AddrCaller("198.51.100.7", 64)
	first := ratelimit.AddrCaller("2001:db8::1", 64)
	for _, c := range []string{keyed, keyed, busy, busy, first, first} {
		l.Allow(ctx, c, limits)
	}
	const n = 10_000
	for i := range n {
		l.Allow(ctx, ratelimit.AddrCaller(fmt.Sprintf("10.%d.%d.%d", i>>16, (i>>8)&255, i&255), 64), limits)
		if i%50 == 0 {
			if d, _ := l.Allow(ctx, busy, limits); d.Allowed {
				t.Fatalf("a caller seen every 50 requests was forgotten after %d new callers", i)
			}
		}
	}
	if got := l.Len(); got != 640+1 {
		t.Fatalf("Len %d, want the cap of anonymous callers and the keyed one", got)
	}
	if got := forgotten.Load(); got != n+2-640 {
		t.Fatalf("forgotten %d, want %d", got, n+2-640)
	}
	if d, _ := l.Allow(ctx, keyed, limits); d.Allowed {
		t.Fatal("the keyed caller was forgotten: admitted past its limit")
	}
	if d, _ := l.Allow(ctx, first, limits); !d.Allowed || d.Minute.Remaining != 1 {
		t.Fatalf("the least recently seen anonymous caller: %+v; want it forgotten, starting afresh", d)
	}
}

// TestBansOutliveTheCap: a flood of new anonymous callers past the cap forgets neither a
// banned caller nor one told to wait out a Retry-After, as the day's sweep would not: else a
// ban would end by sending from other addresses.
func TestBansOutliveTheCap(t *testing.T) {
	clock := ratelimittest.NewClock(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	var forgotten atomic.Int64
	l := ratelimit.NewMemory(clock.Now, ratelimit.BanPolicy{After: 1, For: 15 * time.Minute},
		ratelimit.MaxAnonymous(640), ratelimit.OnForget(func() { forgotten.Add(1) }))
	ctx := context.Background()
	limits := order.Limits{PerMinute: 1, PerDay: 100}
	banned, waiting := ratelimit.AddrCaller("198.51.100.7", 64), ratelimit.AddrCaller("198.51.100.8", 64)
	for _, c := range []string{banned, banned, banned, waiting, waiting} { // admitted, a first 429, one too early
		l.Allow(ctx, c, limits)
	}
	if d, _ := l.Allow(ctx, banned, limits); !d.Banned {
		t.Fatalf("not banned: %+v", d)
	}
	const n = 10_000
	for i := range n { // the banned caller's own /48, walked by /64
		l.Allow(ctx, ratelimit.AddrCaller(fmt.Sprintf("2001:db8:0:%x::1", i), 64), limits)
	}
	clock.Add(time.Second)
	if d, _ := l.Allow(ctx, banned, limits); !d.Banned {
		t.Fatalf("after %d other callers: %+v; want still banned", n, d)
	}
	if d, _ := l.Allow(ctx, waiting, limits); d.Allowed {
		t.Fatalf("a caller told to wait, after %d other callers: %+v; want still refused", n, d)
	}
	if got := l.Len(); got != 640 || forgotten.Load() != n+2-640 {
		t.Fatalf("Len %d, forgotten %d; want the cap kept", got, forgotten.Load())
	}
}

// TestMemoryPerCaller measures what DefaultMaxAnonymous's comment says a caller costs: its
// state, its id and its map slot.
func TestMemoryPerCaller(t *testing.T) {
	const n = 100_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l := ratelimit.NewMemory(nil, ratelimit.DefaultBanPolicy, ratelimit.MaxAnonymous(2*n))
	for i := range n {
		id := ratelimit.AddrCaller(fmt.Sprintf("2001:db8:%x:%x::1", i>>16, i&0xffff), 64)
		l.Allow(context.Background(), id, order.Limits{PerMinute: 60, PerDay: 1000})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / n
	t.Logf("%.0f bytes of heap per anonymous caller", per)
	if l.Len() != n || per > 250 {
		t.Fatalf("%d callers, %.0f bytes each; DefaultMaxAnonymous's comment says under 250", l.Len(), per)
	}
	runtime.KeepAlive(l)
}
