package redisstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
)

// TestSharedPipelinesStayExact: concurrent requests through two limiters on two clients
// (two instances), whose commands share each client's pipelines (batch.go), are admitted
// exactly up to the limit, and each reply goes to its own request: every count from 1 to
// the limit is reported once.
func TestSharedPipelinesStayExact(t *testing.T) {
	srv := redistest.Start(t)
	prefix := redistest.Prefix(t)
	now := time.Date(2026, 11, 23, 10, 0, 30, 0, time.UTC)
	clock := func() time.Time { return now }
	var limiters []*redisstore.Limiter
	for range 2 {
		l, err := redisstore.NewLimiter(limiterClient(t, srv), redisstore.LimiterOptions{Prefix: prefix, Clock: clock, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		limiters = append(limiters, l)
	}
	limits := order.Limits{PerMinute: 150, PerDay: 1000}
	const n = 400
	var mu sync.Mutex
	admitted, seen := 0, map[int64]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			// Half within a request's round trip (the script with the reads of the versions),
			// half alone.
			ctx := context.Background()
			if i%4 < 2 {
				ctx = order.Begin(ctx)
			}
			d, err := limiters[i%2].Allow(ctx, "key:burst", limits)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if d.Allowed {
				admitted++
				seen[d.Minute.Remaining]++
			}
		})
	}
	wg.Wait()
	if int64(admitted) != int64(limits.PerMinute) {
		t.Fatalf("%d admitted; want %d", admitted, limits.PerMinute)
	}
	for r := range int64(limits.PerMinute) {
		if seen[r] != 1 {
			t.Fatalf("Remaining %d seen %d times; want once", r, seen[r])
		}
	}
}

// TestClosingTheClientFailsWaitingRequests: requests queued behind a pipeline that Redis does
// not answer end with an outage as soon as the client is closed, not at their timeout.
func TestClosingTheClientFailsWaitingRequests(t *testing.T) {
	l, rdb, limits := limiterOnPausedRedis(t, time.Minute)
	const n = 20
	errs := make(chan error, n)
	for i := range n {
		go func() {
			ctx := context.Background()
			if i%2 == 0 {
				ctx = order.Begin(ctx)
			}
			_, err := l.Allow(ctx, "key:a", limits)
			errs <- err
		}()
	}
	time.Sleep(200 * time.Millisecond) // one pipeline in flight, the others queued behind it
	rdb.Close()
	timeout := time.After(20 * time.Second) // far below the limiter's minute
	for range n {
		select {
		case err := <-errs:
			if !errors.Is(err, order.ErrUnavailable) {
				t.Errorf("%v; want order.ErrUnavailable", err)
			}
		case <-timeout:
			t.Fatal("requests still waiting after the client was closed")
		}
	}
}

// TestQueuedRequestsEndWithinTheirTimeout: a request queued behind a pipeline that Redis does
// not answer ends, as an outage, within the limiter's timeout of its own start: its batch is
// due when its earliest request is, not a timeout after it leaves (batch.go), and no request
// carries a timer of its own.
func TestQueuedRequestsEndWithinTheirTimeout(t *testing.T) {
	const timeout = time.Second
	l, rdb, limits := limiterOnPausedRedis(t, timeout)
	defer rdb.Close()
	type result struct {
		took time.Duration
		err  error
	}
	allow := func(results chan<- result) {
		start := time.Now()
		_, err := l.Allow(order.Begin(context.Background()), "key:a", limits)
		results <- result{time.Since(start), err}
	}
	first := make(chan result, 1)
	go allow(first) // in flight, unanswered
	time.Sleep(100 * time.Millisecond)
	const queued = 10
	rest := make(chan result, queued)
	for range queued {
		go allow(rest) // queued behind it: due 1.1 s from the first's start
	}
	// A queued request sent only once the first batch fails, with a timeout from then, would
	// end 1.9 s after its start; within its bound, it ends 1 s after. The slack is for a
	// machine that other tests load.
	const slack = 700 * time.Millisecond
	check := func(r result) {
		t.Helper()
		if !errors.Is(r.err, order.ErrUnavailable) {
			t.Errorf("%v; want order.ErrUnavailable", r.err)
		}
		if r.took > timeout+slack {
			t.Errorf("ended %v after it began; want within the timeout, %v", r.took, timeout)
		}
	}
	check(<-first)
	for range queued {
		check(<-rest)
	}
}

// limiterOnPausedRedis is a limiter with timeout on its own client to a redis-server that
// has answered it once (connected, script loaded) and is then paused (SIGSTOP) until the
// test ends: what it is sent next is never answered.
func limiterOnPausedRedis(t *testing.T, timeout time.Duration) (*redisstore.Limiter, *redis.Client, order.Limits) {
	t.Helper()
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, ContextTimeoutEnabled: true})
	l, err := redisstore.NewLimiter(rdb, redisstore.LimiterOptions{Prefix: redistest.Prefix(t), Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	limits := order.Limits{PerMinute: 100, PerDay: 1000}
	if _, err := l.Allow(context.Background(), "key:a", limits); err != nil {
		t.Fatal(err)
	}
	srv.Pause(t)
	t.Cleanup(func() { srv.Resume(t) })
	return l, rdb, limits
}
