package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/ratelimit/ratelimittest"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
)

// limiterClient fails fast and never retries, so that the outage tests see each failure.
func limiterClient(tb testing.TB, srv *redistest.Server) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, DialTimeout: 300 * time.Millisecond, ReadTimeout: time.Second, MaxRetries: -1})
	tb.Cleanup(func() { c.Close() })
	return c
}

func TestLimiterConformance(t *testing.T) {
	rdb := limiterClient(t, redistest.Start(t))
	ratelimittest.Run(t, func(tb testing.TB, clock func() time.Time, policy ratelimit.BanPolicy) ratelimit.Limiter {
		l, err := redisstore.NewLimiter(rdb, redisstore.LimiterOptions{Prefix: redistest.Prefix(tb), Clock: clock, Ban: policy})
		if err != nil {
			tb.Fatal(err)
		}
		return l
	})
}

// TestTwoLimitersShareOneCaller: two instances (two clients) on one Redis admit the limit
// between them, and a ban made through one is seen by the other.
func TestTwoLimitersShareOneCaller(t *testing.T) {
	srv := redistest.Start(t)
	clock := ratelimittest.NewClock(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	prefix := redistest.Prefix(t)
	a, _ := redisstore.NewLimiter(limiterClient(t, srv), redisstore.LimiterOptions{Prefix: prefix, Clock: clock.Now, Ban: ratelimit.BanPolicy{After: 3, For: time.Hour}})
	b, _ := redisstore.NewLimiter(limiterClient(t, srv), redisstore.LimiterOptions{Prefix: prefix, Clock: clock.Now, Ban: ratelimit.BanPolicy{After: 3, For: time.Hour}})
	limits := order.Limits{PerMinute: 10, PerDay: 100}
	ctx := context.Background()
	admitted := 0
	for i := range 30 {
		l := a
		if i%2 == 1 {
			l = b
		}
		if d, err := l.Allow(ctx, "key:x", limits); err != nil {
			t.Fatal(err)
		} else if d.Allowed {
			admitted++
		}
	}
	if admitted != 10 {
		t.Fatalf("admitted %d, want 10", admitted)
	}
	// 30 requests: 10 admitted, then a first 429, then too-early ones: the ban began on the
	// third of those, and b sees it.
	if d, _ := b.Allow(ctx, "key:x", limits); !d.Banned {
		t.Fatalf("b does not see the ban: %+v", d)
	}
}

// TestLaggingClockCannotReopenAWindow: an instance whose clock is a minute behind counts in
// the newer window, so the minute limit holds across both.
func TestLaggingClockCannotReopenAWindow(t *testing.T) {
	srv := redistest.Start(t)
	prefix := redistest.Prefix(t)
	ahead := ratelimittest.NewClock(time.Date(2026, 11, 23, 10, 1, 5, 0, time.UTC))
	behind := ratelimittest.NewClock(time.Date(2026, 11, 23, 10, 0, 55, 0, time.UTC))
	a, _ := redisstore.NewLimiter(limiterClient(t, srv), redisstore.LimiterOptions{Prefix: prefix, Clock: ahead.Now})
	b, _ := redisstore.NewLimiter(limiterClient(t, srv), redisstore.LimiterOptions{Prefix: prefix, Clock: behind.Now})
	limits := order.Limits{PerMinute: 5, PerDay: 100}
	admitted := 0
	for i := range 20 {
		l := a
		if i%2 == 1 {
			l = b
		}
		if d, _ := l.Allow(context.Background(), "key:x", limits); d.Allowed {
			admitted++
		}
	}
	if admitted != 5 {
		t.Fatalf("admitted %d across a skewed pair, want 5", admitted)
	}
}

func TestOutage(t *testing.T) {
	srv := redistest.Start(t)
	limits := order.Limits{PerMinute: 2, PerDay: 100}
	ctx := context.Background()

	t.Run("WithoutFallbackFailsUnavailable", func(t *testing.T) {
		l, _ := redisstore.NewLimiter(limiterClient(t, srv), redisstore.LimiterOptions{Prefix: redistest.Prefix(t)})
		srv.Stop()
		defer srv.Restart(t)
		if _, err := l.Allow(ctx, "key:x", limits); !errors.Is(err, order.ErrUnavailable) {
			t.Fatalf("err %v, want ErrUnavailable", err)
		}
	})

	t.Run("FallsBackAndReturns", func(t *testing.T) {
		clock := ratelimittest.NewClock(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
		fallback := ratelimit.NewMemory(clock.Now, ratelimit.DefaultBanPolicy)
		l, _ := redisstore.NewLimiter(limiterClient(t, srv), redisstore.LimiterOptions{Prefix: redistest.Prefix(t), Clock: clock.Now, Fallback: fallback, RetryEvery: time.Second})
		if d, _ := l.Allow(ctx, "key:x", limits); !d.Allowed || d.Minute.Remaining != 1 {
			t.Fatalf("before: %+v", d)
		}
		srv.Stop()
		// The fallback knows nothing of Redis's counts: it limits on its own.
		for i, want := range []bool{true, true, false} {
			d, err := l.Allow(ctx, "key:x", limits)
			if err != nil || d.Allowed != want {
				t.Fatalf("during the outage, request %d: %+v, %v", i, d, err)
			}
		}
		srv.Restart(t) // empty: nothing persisted
		clock.Add(2 * time.Second)
		d, err := l.Allow(ctx, "key:x", limits)
		if err != nil || !d.Allowed || d.Minute.Remaining != 1 {
			t.Fatalf("after: %+v, %v; want Redis deciding again", d, err)
		}
	})
}

// TestCallerKeysExpireWhenNothingIsLeft: a caller's hash lives until the end of its day, or
// of its ban when that is later, plus a minute of clock slack, counted on the caller's clock.
func TestCallerKeysExpireWhenNothingIsLeft(t *testing.T) {
	srv := redistest.Start(t)
	rdb := limiterClient(t, srv)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		now  time.Time
		reqs int
		ttl  time.Duration
	}{
		{"TheDay", time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), 1, 14*time.Hour + time.Minute},
		// Admitted, a first 429, then a too-early request: banned for 15 minutes from 23:50.
		{"ABanPastMidnight", time.Date(2026, 11, 23, 23, 50, 0, 0, time.UTC), 3, 16 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := redistest.Prefix(t)
			clock := ratelimittest.NewClock(tc.now)
			l, _ := redisstore.NewLimiter(rdb, redisstore.LimiterOptions{Prefix: prefix, Clock: clock.Now,
				Ban: ratelimit.BanPolicy{After: 1, For: 15 * time.Minute}})
			for range tc.reqs {
				if _, err := l.Allow(ctx, "key:x", order.Limits{PerMinute: 1, PerDay: 100}); err != nil {
					t.Fatal(err)
				}
			}
			ttl, err := rdb.PTTL(ctx, "{"+prefix+":rl:key:x}").Result()
			if err != nil || ttl > tc.ttl || ttl < tc.ttl-5*time.Second {
				t.Fatalf("time to live %v, %v; want %v", ttl, err, tc.ttl)
			}
		})
	}
}

// TestAnInstanceBehindTellsTheStoredWindowsEnd: of two instances a second apart, the one
// behind finds the caller counted in a minute it has not reached; its Retry-After names that
// minute's end, and a client that waits for it is admitted, not banned as too early.
func TestAnInstanceBehindTellsTheStoredWindowsEnd(t *testing.T) {
	srv := redistest.Start(t)
	prefix := redistest.Prefix(t)
	ahead := ratelimittest.NewClock(time.Date(2026, 11, 23, 10, 1, 0, 500_000_000, time.UTC))
	behind := ratelimittest.NewClock(ahead.Now().Add(-time.Second))
	policy := ratelimit.BanPolicy{After: 1, For: time.Hour}
	a, _ := redisstore.NewLimiter(limiterClient(t, srv), redisstore.LimiterOptions{Prefix: prefix, Clock: ahead.Now, Ban: policy})
	b, _ := redisstore.NewLimiter(limiterClient(t, srv), redisstore.LimiterOptions{Prefix: prefix, Clock: behind.Now, Ban: policy})
	ctx := context.Background()
	limits := order.Limits{PerMinute: 1, PerDay: 100}
	if d, err := a.Allow(ctx, "key:x", limits); err != nil || !d.Allowed {
		t.Fatalf("ahead: %+v, %v", d, err)
	}
	d, err := b.Allow(ctx, "key:x", limits)
	if err != nil || d.Allowed || !d.Binding.End.Equal(time.Date(2026, 11, 23, 10, 2, 0, 0, time.UTC)) || d.RetryAfter != 61*time.Second {
		t.Fatalf("behind: %+v, %v; want refused until 10:02, the minute counted in", d, err)
	}
	behind.Add(d.RetryAfter)
	if d, err := b.Allow(ctx, "key:x", limits); err != nil || !d.Allowed {
		t.Fatalf("behind, after waiting Retry-After: %+v, %v", d, err)
	}
}
