package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/ratelimit/ratelimittest"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
)

// TestCallerGoneIsNotAnOutage: a request whose own context ends (the client hung up, or its
// deadline passed) gets the context's error, and the limiter goes on asking Redis: its
// fallback is neither used for that request nor for the next.
func TestCallerGoneIsNotAnOutage(t *testing.T) {
	srv := redistest.Start(t)
	limits := order.Limits{PerMinute: 100, PerDay: 1000}
	type setup struct {
		l         *redisstore.Limiter
		memory    *ratelimit.Memory
		fallbacks *atomic.Int64
	}
	newLimiter := func(t *testing.T, timeout time.Duration) setup {
		s := setup{memory: ratelimit.NewMemory(nil, ratelimit.DefaultBanPolicy), fallbacks: new(atomic.Int64)}
		// A clock that stands still: the counts checked below never meet a minute's end.
		clock := ratelimittest.NewClock(time.Date(2026, 11, 23, 10, 0, 30, 0, time.UTC))
		s.l, _ = redisstore.NewLimiter(limiterClient(t, srv), redisstore.LimiterOptions{Prefix: redistest.Prefix(t),
			Clock: clock.Now, Timeout: timeout, Fallback: s.memory, RetryEvery: time.Hour, OnFallback: func() { s.fallbacks.Add(1) }})
		return s
	}
	// redisDecidesNext checks that a request with a live context is decided by Redis.
	redisDecidesNext := func(t *testing.T, s setup) {
		t.Helper()
		d, err := s.l.Allow(context.Background(), "addr:192.0.2.1", limits)
		if err != nil || !d.Allowed {
			t.Fatalf("next request: %+v, %v", d, err)
		}
		if s.fallbacks.Load() != 0 || s.memory.Len() != 0 {
			t.Fatalf("the fallback decided %d times and holds %d callers; want Redis deciding", s.fallbacks.Load(), s.memory.Len())
		}
	}

	t.Run("CancelledBefore", func(t *testing.T) {
		s := newLimiter(t, 2*time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := s.l.Allow(ctx, "addr:192.0.2.1", limits); !errors.Is(err, context.Canceled) || errors.Is(err, order.ErrUnavailable) {
			t.Fatalf("err %v, want context.Canceled alone", err)
		}
		redisDecidesNext(t, s)
		if d, _ := s.l.Allow(context.Background(), "addr:192.0.2.1", limits); d.Minute.Remaining != 98 {
			t.Fatalf("%+v: the cancelled request counted", d)
		}
	})

	t.Run("CancelledDuring", func(t *testing.T) {
		s := newLimiter(t, 2*time.Second)
		srv.Pause(t)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err := s.l.Allow(ctx, "addr:192.0.2.1", limits)
		srv.Resume(t)
		if !errors.Is(err, context.Canceled) || errors.Is(err, order.ErrUnavailable) {
			t.Fatalf("err %v, want context.Canceled alone", err)
		}
		redisDecidesNext(t, s)
	})

	t.Run("DeadlineDuring", func(t *testing.T) {
		s := newLimiter(t, 2*time.Second)
		srv.Pause(t)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := s.l.Allow(ctx, "addr:192.0.2.1", limits)
		srv.Resume(t)
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, order.ErrUnavailable) {
			t.Fatalf("err %v, want context.DeadlineExceeded alone", err)
		}
		redisDecidesNext(t, s)
	})

	// The limiter's decisions share pipelines (limiter.go): requests whose
	// commands wait in the same batch while Redis is frozen, half of which hang up, leave
	// the others decided by Redis as if alone, and the limiter on Redis.
	t.Run("CancelledInASharedBatch", func(t *testing.T) {
		s := newLimiter(t, 3*time.Second)
		const caller, n = "addr:192.0.2.2", 20
		srv.Pause(t)
		var wg sync.WaitGroup
		failures := make(chan string, n)
		for i := range n {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			leaves := i%2 == 0
			if leaves {
				time.AfterFunc(100*time.Millisecond, cancel)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := s.l.Allow(ctx, caller, limits)
				switch {
				case leaves && (!errors.Is(err, context.Canceled) || errors.Is(err, order.ErrUnavailable)):
					failures <- fmt.Sprintf("a request that hung up: %v; want context.Canceled alone", err)
				case !leaves && (err != nil || !d.Allowed):
					failures <- fmt.Sprintf("a request that waited: %+v, %v; want admitted by Redis", d, err)
				}
			}()
		}
		time.Sleep(300 * time.Millisecond) // every request queued, half of them gone
		srv.Resume(t)
		wg.Wait()
		close(failures)
		for f := range failures {
			t.Error(f)
		}
		redisDecidesNext(t, s)
		// Each request that waited counted once; one that hung up counted at most once (Redis
		// may have had its command, as on a connection of its own); this one, once.
		d, _ := s.l.Allow(context.Background(), caller, limits)
		if used := limits.PerMinute - d.Minute.Remaining; used < n/2+1 || used > n+1 {
			t.Fatalf("%d requests counted; want from %d to %d", used, n/2+1, n+1)
		}
	})

	t.Run("OurTimeoutIsAnOutage", func(t *testing.T) {
		s := newLimiter(t, 100*time.Millisecond)
		bare, _ := redisstore.NewLimiter(limiterClient(t, srv), redisstore.LimiterOptions{Prefix: redistest.Prefix(t), Timeout: 100 * time.Millisecond})
		srv.Pause(t)
		defer srv.Resume(t)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // the caller waits longer
		defer cancel()
		if d, err := s.l.Allow(ctx, "addr:192.0.2.1", limits); err != nil || !d.Allowed || s.fallbacks.Load() != 1 {
			t.Fatalf("%+v, %v, %d fallback decisions; want the fallback's", d, err, s.fallbacks.Load())
		}
		_, err := bare.Allow(ctx, "addr:192.0.2.1", limits)
		if !errors.Is(err, order.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("without a fallback: %v; want ErrUnavailable, not a context error", err)
		}
	})
}

// TestStoresCallerGoneIsNotAnOutage: the stores, likewise, return the request's own
// context error, and ErrUnavailable only when their own bound ran out.
func TestStoresCallerGoneIsNotAnOutage(t *testing.T) {
	srv := redistest.Start(t)
	prefix := redistest.Prefix(t)
	d := newDeployment(t, client(t, srv), prefix)
	d.fill(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, o := range ops {
		if err := o.call(cancelled, d); !errors.Is(err, context.Canceled) || errors.Is(err, order.ErrUnavailable) {
			t.Errorf("%s, cancelled: %v; want context.Canceled alone", o.name, err)
		}
	}
	srv.Pause(t)
	defer srv.Resume(t)
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := ordertest.Fresh(d.orders).List(short); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, order.ErrUnavailable) {
		t.Errorf("caller's deadline: %v; want context.DeadlineExceeded alone", err)
	}
	slow, _ := redisstore.NewOrders(client(t, srv), prefix, 50*time.Millisecond)
	if _, err := ordertest.Fresh(slow).List(context.Background()); !errors.Is(err, order.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("our own bound: %v; want ErrUnavailable, not a context error", err)
	}
}

// TestWrongRecordIsNotAnOutage: a caller's hash overwritten with a string by something else
// is a corrupt record, answered as such; the fallback does not take over.
func TestWrongRecordIsNotAnOutage(t *testing.T) {
	srv := redistest.Start(t)
	rdb := limiterClient(t, srv)
	prefix := redistest.Prefix(t)
	var fallbacks atomic.Int64
	l, _ := redisstore.NewLimiter(rdb, redisstore.LimiterOptions{Prefix: prefix,
		Fallback: ratelimit.NewMemory(nil, ratelimit.DefaultBanPolicy), OnFallback: func() { fallbacks.Add(1) }})
	if err := rdb.Set(context.Background(), "{"+prefix+":rl:key:x}", "not a hash", 0).Err(); err != nil {
		t.Fatal(err)
	}
	_, err := l.Allow(context.Background(), "key:x", order.Limits{PerMinute: 1, PerDay: 1})
	if !errors.Is(err, order.ErrCorrupt) || errors.Is(err, order.ErrUnavailable) || fallbacks.Load() != 0 {
		t.Fatalf("err %v, %d fallback decisions; want ErrCorrupt and none", err, fallbacks.Load())
	}
}
