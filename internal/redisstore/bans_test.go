package redisstore_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/ratelimit/ratelimittest"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
)

// TestRememberedBanIsRedisDecision: once a limiter has been told by Redis that a caller is
// banned, it answers the caller itself until the ban ends. At moments across the ban, a minute
// and a day rolling over within it, and its end, that answer must equal the one a limiter
// that remembers nothing gets from Redis at the same moment.
func TestRememberedBanIsRedisDecision(t *testing.T) {
	srv := redistest.Start(t)
	rdb := limiterClient(t, srv)
	// 23:59:10 UTC: the minute and the day both end during the ban.
	clock := ratelimittest.NewClock(time.Date(2026, 11, 23, 23, 59, 10, 0, time.UTC))
	prefix := redistest.Prefix(t)
	policy := ratelimit.BanPolicy{After: 3, For: 2 * time.Minute}
	open := func() *redisstore.Limiter {
		l, err := redisstore.NewLimiter(rdb, redisstore.LimiterOptions{Prefix: prefix, Clock: clock.Now, Ban: policy})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	a := open()
	ctx := context.Background()
	limits := order.Limits{PerMinute: 2, PerDay: 100}
	// Two admitted, a first 429, then too-early requests until the ban.
	var d ratelimit.Decision
	for i := 0; i < 20 && !d.Banned; i++ {
		var err error
		if d, err = a.Allow(ctx, "key:flood", limits); err != nil {
			t.Fatal(err)
		}
	}
	if !d.Banned {
		t.Fatal("no ban after 20 requests over the limit")
	}
	// The ban runs two minutes from about 23:59:10: the steps stay within it, across the new
	// minute and the new day, up to its last second.
	for _, step := range []time.Duration{0, time.Second, 30 * time.Second, 25 * time.Second, 60 * time.Second, 3 * time.Second} {
		clock.Add(step)
		got, err := a.Allow(ctx, "key:flood", limits)
		if err != nil {
			t.Fatal(err)
		}
		want, err := open().Allow(ctx, "key:flood", limits) // a limiter that remembers nothing
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("at %s: the remembered ban answers\n%+v\nRedis answers\n%+v", clock.Now(), got, want)
		}
	}
	if !d.Banned || !clock.Now().Before(d.Binding.End) {
		t.Fatalf("the steps went past the ban, which ends at %s", d.Binding.End)
	}
	clock.Set(d.Binding.End)
	if d, _ := a.Allow(ctx, "key:flood", limits); d.Banned || !d.Allowed {
		t.Fatalf("after the ban's end: %+v, want admitted", d)
	}
}

// TestRememberedBanCostsRedisNothing: while Redis does not answer at all (paused), a caller
// it banned is still answered banned, at once, by the limiter's memory; another caller's
// request, which needs Redis, fails as an outage.
func TestRememberedBanCostsRedisNothing(t *testing.T) {
	srv := redistest.Start(t)
	clock := ratelimittest.NewClock(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	l, err := redisstore.NewLimiter(limiterClient(t, srv), redisstore.LimiterOptions{
		Prefix: redistest.Prefix(t), Clock: clock.Now, Timeout: 300 * time.Millisecond,
		Ban: ratelimit.BanPolicy{After: 2, For: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	limits := order.Limits{PerMinute: 1, PerDay: 100}
	for i := 0; i < 10; i++ {
		if d, err := l.Allow(ctx, "addr:192.0.2.1", limits); err != nil {
			t.Fatal(err)
		} else if d.Banned {
			break
		}
	}
	srv.Pause(t)
	defer srv.Resume(t)
	for range 100 {
		d, err := l.Allow(ctx, "addr:192.0.2.1", limits)
		if err != nil || !d.Banned {
			t.Fatalf("a banned caller while Redis is paused: %+v, %v", d, err)
		}
	}
	if _, err := l.Allow(ctx, "addr:192.0.2.2", limits); !errors.Is(err, order.ErrUnavailable) {
		t.Fatalf("another caller while Redis is paused: %v, want %v", err, order.ErrUnavailable)
	}
}
