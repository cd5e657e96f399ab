// Package ratelimittest is the conformance suite of ratelimit.Limiter, driven by a clock the
// test moves, so that every implementation applies the rules of package ratelimit alike.
package ratelimittest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
)

// Clock is a time the test moves by hand; safe for concurrent use.
type Clock struct{ now atomic.Pointer[time.Time] }

// NewClock returns a clock at now.
func NewClock(now time.Time) *Clock {
	c := &Clock{}
	c.Set(now)
	return c
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time { return *c.now.Load() }

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) { c.now.Store(&t) }

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) { c.Set(c.Now().Add(d)) }

// NewLimiter returns a fresh limiter, sharing nothing with earlier ones, that reads clock.
type NewLimiter func(tb testing.TB, clock func() time.Time, policy ratelimit.BanPolicy) ratelimit.Limiter

// start is 10:00:00 UTC: a whole minute and most of the day are ahead.
var start = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

var plans = map[order.Plan]order.Limits{
	order.Free:       {PerMinute: 60, PerDay: 1_000},
	order.Pro:        {PerMinute: 300, PerDay: 10_000},
	order.Business:   {PerMinute: 1_000, PerDay: 100_000},
	order.Enterprise: {PerMinute: 7, PerDay: 50},
}

// Run runs the suite.
func Run(t *testing.T, newLimiter NewLimiter) {
	ctx := context.Background()
	fresh := func(t *testing.T, policy ratelimit.BanPolicy) (ratelimit.Limiter, *Clock) {
		clock := NewClock(start)
		return newLimiter(t, clock.Now, policy), clock
	}
	allow := func(t *testing.T, l ratelimit.Limiter, caller string, limits order.Limits) ratelimit.Decision {
		t.Helper()
		d, err := l.Allow(ctx, caller, limits)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	spend := func(t *testing.T, l ratelimit.Limiter, limits order.Limits, n int) {
		t.Helper()
		for range n {
			allow(t, l, "k", limits)
		}
	}

	t.Run("ExactMinuteCountPerPlan", func(t *testing.T) {
		for p, limits := range plans {
			t.Run(string(p), func(t *testing.T) {
				l, _ := fresh(t, ratelimit.DefaultBanPolicy)
				for i := int64(1); i <= limits.PerMinute; i++ {
					d := allow(t, l, "k", limits)
					if !d.Allowed || d.Minute.Remaining != limits.PerMinute-i || d.Day.Remaining != limits.PerDay-i {
						t.Fatalf("request %d: %+v", i, d)
					}
				}
				d := allow(t, l, "k", limits)
				if d.Allowed || d.Banned || d.Binding.Name != ratelimit.Minute || d.Binding.Remaining != 0 {
					t.Fatalf("request %d: %+v; want refused by the minute", limits.PerMinute+1, d)
				}
				if d.RetryAfter != 60*time.Second || !d.Binding.End.Equal(start.Add(time.Minute)) {
					t.Fatalf("RetryAfter %v, End %v", d.RetryAfter, d.Binding.End)
				}
			})
		}
	})

	t.Run("RefusedRequestsCountInNeitherWindow", func(t *testing.T) {
		l, clock := fresh(t, ratelimit.BanPolicy{}) // no bans: refusals only
		limits := plans[order.Free]
		spend(t, l, limits, 60)
		for range 100 {
			if d := allow(t, l, "k", limits); d.Allowed {
				t.Fatal("admitted past the limit")
			}
		}
		clock.Add(time.Minute)
		d := allow(t, l, "k", limits)
		if !d.Allowed || d.Day.Remaining != 1000-61 || d.Minute.Remaining != 59 {
			t.Fatalf("next minute: %+v; want the refusals not counted", d)
		}
	})

	t.Run("MinuteResetsExactlyAtItsEnd", func(t *testing.T) {
		l, clock := fresh(t, ratelimit.DefaultBanPolicy)
		limits := plans[order.Free]
		clock.Set(start.Add(59*time.Second + 999*time.Millisecond))
		spend(t, l, limits, 60)
		if d := allow(t, l, "k", limits); d.Allowed || d.RetryAfter != time.Second {
			t.Fatalf("last millisecond: %+v", d)
		}
		clock.Set(start.Add(time.Minute))
		if d := allow(t, l, "k", limits); !d.Allowed || d.Minute.Remaining != 59 || !d.Minute.End.Equal(start.Add(2*time.Minute)) {
			t.Fatalf("first instant of the next minute: %+v", d)
		}
	})

	t.Run("AfterTheClockStepsBackRetryAfterIsTheCountedWindows", func(t *testing.T) {
		l, clock := fresh(t, ratelimit.BanPolicy{After: 1, For: time.Hour})
		limits := order.Limits{PerMinute: 1, PerDay: 1000}
		clock.Set(start.Add(time.Minute))
		allow(t, l, "k", limits) // counts in 10:01
		// The clock steps back to 10:00:30: the request counts in 10:01 still, which ends at
		// 10:02, and so do the headers and Retry-After.
		clock.Set(start.Add(30 * time.Second))
		d := allow(t, l, "k", limits)
		if d.Allowed || !d.Binding.End.Equal(start.Add(2*time.Minute)) || d.RetryAfter != 90*time.Second {
			t.Fatalf("after the step back: %+v; want refused until 10:02", d)
		}
		clock.Add(d.RetryAfter) // a client that waits as told is neither early nor refused
		if d := allow(t, l, "k", limits); !d.Allowed {
			t.Fatalf("after waiting Retry-After: %+v", d)
		}
	})

	t.Run("DayLimitBeforeMinuteLimit", func(t *testing.T) {
		l, clock := fresh(t, ratelimit.DefaultBanPolicy)
		limits := plans[order.Enterprise] // 7/min, 50/day
		midnight := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
		admitted := 0
		for minute := 0; admitted < 50; minute++ {
			clock.Set(start.Add(time.Duration(minute) * time.Minute))
			for range 7 {
				if d := allow(t, l, "k", limits); d.Allowed {
					admitted++
					if admitted == 50 && (d.Binding.Name != ratelimit.Day || d.Binding.Remaining != 0) {
						t.Fatalf("50th: %+v; want the day binding with 0 left", d)
					}
				}
				if admitted == 50 {
					break
				}
			}
		}
		clock.Add(time.Minute)
		d := allow(t, l, "k", limits)
		if d.Allowed || d.Binding.Name != ratelimit.Day || !d.Binding.End.Equal(midnight) || d.Minute.Remaining != 7 {
			t.Fatalf("51st: %+v; want refused by the day, until midnight", d)
		}
		if want := midnight.Sub(clock.Now()); d.RetryAfter != want {
			t.Fatalf("RetryAfter %v, want %v", d.RetryAfter, want)
		}
		clock.Set(midnight)
		if d := allow(t, l, "k", limits); !d.Allowed || d.Day.Remaining != 49 {
			t.Fatalf("after midnight: %+v", d)
		}
	})

	t.Run("BindingWindowTieGoesToTheLaterWindow", func(t *testing.T) {
		l, _ := fresh(t, ratelimit.DefaultBanPolicy)
		limits := order.Limits{PerMinute: 10, PerDay: 10}
		for i := int64(1); i <= 10; i++ {
			d := allow(t, l, "k", limits)
			if d.Binding.Name != ratelimit.Day || d.Binding.Remaining != 10-i {
				t.Fatalf("request %d: binding %+v; want the day on a tie", i, d.Binding)
			}
		}
	})

	t.Run("LimitsLoweredUnderTheCountsBindTheDayOnATie", func(t *testing.T) {
		l, clock := fresh(t, ratelimit.BanPolicy{After: 1, For: time.Hour})
		spend(t, l, order.Limits{PerMinute: 10, PerDay: 20}, 10)
		// The key's plan changes: both windows are past their new limits, 0 left in each, and
		// the tie goes to the day, as Retry-After says.
		lowered := order.Limits{PerMinute: 2, PerDay: 10}
		d := allow(t, l, "k", lowered)
		if d.Allowed || d.Binding.Name != ratelimit.Day || d.Binding.Remaining != 0 {
			t.Fatalf("first 429: %+v; want the day binding", d)
		}
		// A minute on, the Retry-After (midnight) has not passed: too early, and banned.
		clock.Add(time.Minute)
		if d := allow(t, l, "k", lowered); !d.Banned {
			t.Fatalf("before the Retry-After passed, with ban-after 1: %+v; want banned", d)
		}
	})

	t.Run("CallersAreIndependent", func(t *testing.T) {
		l, _ := fresh(t, ratelimit.DefaultBanPolicy)
		limits := order.Limits{PerMinute: 2, PerDay: 10}
		spend(t, l, limits, 2)
		if d := allow(t, l, "k", limits); d.Allowed {
			t.Fatal("k admitted past its limit")
		}
		if d := allow(t, l, "other", limits); !d.Allowed || d.Minute.Remaining != 1 {
			t.Fatalf("another caller: %+v", d)
		}
	})

	t.Run("BanStartsOnTheNthTooEarlyRequestAndEnds", func(t *testing.T) {
		policy := ratelimit.BanPolicy{After: 30, For: 15 * time.Minute}
		l, clock := fresh(t, policy)
		limits := plans[order.Free]
		spend(t, l, limits, 60)
		first := allow(t, l, "k", limits) // the first 429 is not too early
		if first.Allowed || first.Banned {
			t.Fatalf("first refusal: %+v", first)
		}
		for i := 1; i < 30; i++ {
			clock.Add(time.Second)
			if d := allow(t, l, "k", limits); d.Allowed || d.Banned {
				t.Fatalf("too-early request %d: %+v; want refused, not banned", i, d)
			}
		}
		if other := allow(t, l, "other", limits); !other.Allowed {
			t.Fatal("another caller is affected")
		}
		clock.Add(time.Second)
		banStart := clock.Now()
		d := allow(t, l, "k", limits)
		if !d.Banned || d.Allowed || d.Binding.Remaining != 0 || !d.Binding.End.Equal(banStart.Add(15*time.Minute)) || d.RetryAfter != 15*time.Minute {
			t.Fatalf("30th too-early request: %+v; want banned for 15 minutes", d)
		}
		// The ban holds after the minute ends, with Retry-After counting down.
		clock.Set(banStart.Add(10 * time.Minute))
		if d := allow(t, l, "k", limits); !d.Banned || d.RetryAfter != 5*time.Minute {
			t.Fatalf("during the ban: %+v", d)
		}
		clock.Set(banStart.Add(15 * time.Minute))
		if d := allow(t, l, "k", limits); !d.Allowed {
			t.Fatalf("after the ban: %+v", d)
		}
	})

	t.Run("WaitingForRetryAfterIsNotTooEarly", func(t *testing.T) {
		l, clock := fresh(t, ratelimit.BanPolicy{After: 3, For: time.Hour})
		limits := order.Limits{PerMinute: 1, PerDay: 1000}
		for range 20 { // a polite client: one request, a 429, then waits until Retry-After
			allow(t, l, "k", limits)
			d := allow(t, l, "k", limits)
			if d.Allowed || d.Banned {
				t.Fatalf("%+v", d)
			}
			clock.Add(d.RetryAfter)
		}
	})

	t.Run("TooEarlyCountStartsAgainWithEachFirst429", func(t *testing.T) {
		l, clock := fresh(t, ratelimit.BanPolicy{After: 3, For: time.Hour})
		limits := order.Limits{PerMinute: 1, PerDay: 1000}
		for range 5 {
			spend(t, l, limits, 3) // admitted, a first 429, one too early
			if d := allow(t, l, "k", limits); d.Banned {
				t.Fatalf("banned on 2 too-early requests: %+v", d)
			}
			clock.Add(time.Minute)
		}
	})

	t.Run("PeekCountsNothingAndSeesBans", func(t *testing.T) {
		l, clock := fresh(t, ratelimit.BanPolicy{After: 3, For: time.Hour})
		limits := plans[order.Free]
		peek := func() ratelimit.Decision {
			t.Helper()
			d, err := l.Peek(ctx, "k", limits)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		if d := peek(); !d.Allowed || d.Minute.Remaining != 60 || d.Day.Remaining != 1000 {
			t.Fatalf("a caller never seen: %+v; want all left", d)
		}
		spend(t, l, limits, 10)
		for range 5 {
			if d := peek(); !d.Allowed || d.Banned || d.Minute.Remaining != 50 || d.Day.Remaining != 990 {
				t.Fatalf("after 10 requests: %+v; want 50 and 990 left, nothing counted", d)
			}
		}
		if d := allow(t, l, "k", limits); d.Minute.Remaining != 49 {
			t.Fatalf("the next request: %+v; want the peeks not counted", d)
		}
		spend(t, l, limits, 49)
		allow(t, l, "k", limits) // the first 429
		for range 10 {           // peeks are not too early: no ban
			if d := peek(); d.Allowed || d.Banned || d.Binding.Name != ratelimit.Minute {
				t.Fatalf("over the minute: %+v; want refused, not banned", d)
			}
		}
		for range 3 {
			allow(t, l, "k", limits)
		}
		if d := peek(); !d.Banned || d.Allowed || !d.Binding.End.Equal(clock.Now().Add(time.Hour)) {
			t.Fatalf("after the third too-early request: %+v; want the ban seen", d)
		}
		clock.Add(time.Hour)
		if d := peek(); d.Banned || !d.Allowed || d.Minute.Remaining != 60 || d.Day.Remaining != 940 {
			t.Fatalf("after the ban: %+v; want a new minute, the day's 60 counted", d)
		}
	})

	t.Run("NoBansWhenAfterIsZero", func(t *testing.T) {
		l, _ := fresh(t, ratelimit.BanPolicy{After: 0, For: time.Hour})
		limits := order.Limits{PerMinute: 1, PerDay: 10}
		for range 500 {
			if d := allow(t, l, "k", limits); d.Banned {
				t.Fatal("banned with bans off")
			}
		}
	})

	t.Run("ConcurrentRequestsAdmitExactlyTheLimit", func(t *testing.T) {
		l, _ := fresh(t, ratelimit.DefaultBanPolicy)
		limits := plans[order.Pro] // 300 per minute
		var admitted atomic.Int64
		seen := make([]atomic.Int64, limits.PerMinute)
		var wg sync.WaitGroup
		for range 1000 {
			wg.Go(func() {
				d, err := l.Allow(ctx, "burst", limits)
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					admitted.Add(1)
					seen[d.Minute.Remaining].Add(1)
				}
			})
		}
		wg.Wait()
		if admitted.Load() != limits.PerMinute {
			t.Fatalf("admitted %d of 1000, want %d", admitted.Load(), limits.PerMinute)
		}
		for r := range seen {
			if seen[r].Load() != 1 {
				t.Fatalf("Remaining %d was given %d times, want once", r, seen[r].Load())
			}
		}
	})

	t.Run("AnonymousCallersByIPv4AddressAndIPv6Prefix", func(t *testing.T) {
		l, _ := fresh(t, ratelimit.BanPolicy{})
		limits := order.Limits{PerMinute: 2, PerDay: 100}
		// Addresses of one /64 share a quota, the next /64 has its own; IPv4 is per address,
		// and an IPv4-mapped IPv6 address is its IPv4 address.
		for _, c := range []struct {
			addr    string
			allowed bool
			left    int64
		}{
			{"2001:db8:1:2::1", true, 1},
			{"2001:db8:1:2:ffff:ffff:ffff:fffe", true, 0},
			{"2001:db8:1:2::3", false, 0},
			{"2001:db8:1:3::1", true, 1},
			{"192.0.2.1", true, 1},
			{"192.0.2.1", true, 0},
			{"::ffff:192.0.2.1", false, 0},
			{"192.0.2.2", true, 1},
		} {
			d := allow(t, l, ratelimit.AddrCaller(c.addr, ratelimit.DefaultIPv6Prefix), limits)
			if d.Allowed != c.allowed || d.Minute.Remaining != c.left {
				t.Fatalf("%s: %+v; want allowed %v with %d left", c.addr, d, c.allowed, c.left)
			}
		}
	})

	t.Run("ManyCallers", func(t *testing.T) {
		l, _ := fresh(t, ratelimit.DefaultBanPolicy)
		for i := range 200 {
			if d := allow(t, l, ratelimit.AddrCaller(fmt.Sprintf("10.0.%d.%d", i/256, i%256), ratelimit.DefaultIPv6Prefix), plans[order.Free]); !d.Allowed || d.Minute.Remaining != 59 {
				t.Fatalf("caller %d: %+v", i, d)
			}
		}
	})
}
