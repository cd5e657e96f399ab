package order

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"
)

// countingLog is a log whose newest position the test sets; it counts the waits on it at a time.
type countingLog struct {
	EventLog // nil: SharedWaits calls only the two methods below
	mu       sync.Mutex
	newest   int
	moved    chan struct{}
	waiting  int // WaitForEvents calls in progress
	most     int // of waiting, ever
}

func (l *countingLog) LastEventID(context.Context) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strconv.Itoa(l.newest), nil
}

func (l *countingLog) WaitForEvents(ctx context.Context, after string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waiting++
	l.most = max(l.most, l.waiting)
	defer func() { l.waiting-- }()
	for strconv.Itoa(l.newest) == after {
		moved := l.moved
		l.mu.Unlock()
		select {
		case <-moved:
		case <-ctx.Done():
		}
		l.mu.Lock()
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

func (l *countingLog) set(newest int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.newest = newest
	close(l.moved)
	l.moved = make(chan struct{})
}

// until polls cond every millisecond for 5 s at most.
func until(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	tick, deadline := time.NewTicker(time.Millisecond), time.After(5*time.Second)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			tb.Fatalf("5 s on, not yet: %s", what)
		}
	}
}

// TestSharedWaitsWaitOnceForAll: however many wait, the log is waited on once at a time; every
// waiter returns at the next event, and at a log that went back; once nobody waits, nor does the watcher.
func TestSharedWaitsWaitOnceForAll(t *testing.T) {
	l := &countingLog{newest: 5, moved: make(chan struct{})}
	s := SharedWaits(l).(*sharedWaits)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	waitAll := func(after string, then func()) {
		const waiters = 50
		done := make(chan error, waiters)
		for range waiters {
			go func() { done <- s.WaitForEvents(ctx, after) }()
		}
		until(t, "every waiter waits on one wait of the log", func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			l.mu.Lock()
			defer l.mu.Unlock()
			return s.waiters == waiters && l.waiting == 1
		})
		then()
		for range waiters {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
	}
	waitAll("5", func() { l.set(6) })
	waitAll("6", func() { l.set(0) }) // the log lost its history
	l.mu.Lock()
	if most := l.most; most != 1 {
		t.Fatalf("%d waits on the log at once; want 1", most)
	}
	l.mu.Unlock()

	quick, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	defer stop()
	if err := s.WaitForEvents(quick, "0"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitForEvents at the newest = %v, want the deadline", err)
	}
	if err := s.WaitForEvents(ctx, "6"); err != nil { // not the newest: at once
		t.Fatal(err)
	}
	until(t, "the watcher ends when nobody waits", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		l.mu.Lock()
		defer l.mu.Unlock()
		return !s.watching && l.waiting == 0
	})
}

// TestSharedWaitsWhenTheWatcherIsBehind: a caller that read a position the watcher has not read
// yet waits for the event after it, instead of returning at once to read the log again and again.
func TestSharedWaitsWhenTheWatcherIsBehind(t *testing.T) {
	l := &countingLog{newest: 5, moved: make(chan struct{})}
	s := SharedWaits(l).(*sharedWaits)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	first := make(chan error, 1)
	go func() { first <- s.WaitForEvents(ctx, "5") }()
	until(t, "the watcher waits on the log at 5", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		l.mu.Lock()
		defer l.mu.Unlock()
		return s.newest == "5" && l.waiting == 1
	})
	l.mu.Lock()
	l.newest = 6 // an event the watcher has not been woken for: a caller read it first
	l.mu.Unlock()
	quick, stop := context.WithTimeout(ctx, 100*time.Millisecond)
	defer stop()
	if err := s.WaitForEvents(quick, "6"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitForEvents at the log's newest, ahead of the watcher = %v, want the deadline", err)
	}
	l.set(7)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := s.WaitForEvents(ctx, "6"); err != nil { // 7 follows it
		t.Fatal(err)
	}
}
