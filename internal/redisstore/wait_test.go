package redisstore_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
)

// TestWaitOutlastsTheCallTimeout: a wait blocks in XREAD for longer than the client's read
// timeout and the store's call timeout (--redis-timeout), without failing each call: a
// wait of 3 s with nothing new costs two or three XREADs, not one every timeout.
func TestWaitOutlastsTheCallTimeout(t *testing.T) {
	srv := redistest.Start(t)
	const timeout = 200 * time.Millisecond
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: timeout, ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	e, err := redisstore.NewEvents(rdb, redistest.Prefix(t), timeout)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := e.WaitForEvents(ctx, "0-0"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitForEvents = %v, want the deadline", err)
	}
	stats := srv.MustDo(t, "INFO", "commandstats")
	for _, l := range strings.Split(stats, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "cmdstat_xread:calls="); ok {
			calls, _, _ := strings.Cut(rest, ",")
			if n, err := strconv.Atoi(calls); err != nil || n > 3 {
				t.Fatalf("%s XREADs in 3 s; want at most 3 (blocks of 2 s)", calls)
			}
			return
		}
	}
	t.Fatalf("no XREAD: %s", stats)
}

// TestWaitersShareOneXREAD: however many wait through order.SharedWaits, as an instance's
// do, one XREAD at a time blocks (each holds a connection of the pool), and every waiter
// returns at the next event.
func TestWaitersShareOneXREAD(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv)
	prefix := redistest.Prefix(t)
	log, err := redisstore.NewEvents(rdb, prefix, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	e := order.SharedWaits(log)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const waiters = 50
	done := make(chan error, waiters)
	for range waiters {
		go func() { done <- e.WaitForEvents(ctx, "0-0") }()
	}
	// Once the watcher blocks, an event; then every waiter returns.
	for !strings.Contains(srv.MustDo(t, "CLIENT", "LIST"), "cmd=xread") {
		if ctx.Err() != nil {
			t.Fatal("no XREAD blocks")
		}
	}
	srv.MustDo(t, "XADD", "{"+prefix+":orders}:events", "*", "type", "order.created")
	for range waiters {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(srv.MustDo(t, "CLIENT", "LIST"), "\n") + 1; n > 3 {
		t.Fatalf("%d connections for %d waiters; want the test's, the watcher's and this one", n, waiters)
	}
}
