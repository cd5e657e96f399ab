package order

import (
	"context"
	"sync"
	"time"
)

// watchFor bounds each of the watcher's waits on the log, after which it ends if nobody waits any
// more, or reads the newest position anew: a log that went back (a lost Redis) may not move past it.
const watchFor, watchRetry = 2 * time.Second, 250 * time.Millisecond // watchRetry: after the log failed

// SharedWaits is log, whose WaitForEvents its callers share: while anyone waits, one watcher waits on
// log (in Redis, a blocking XREAD holding a connection) and wakes the waiters whose position is not the newest.
func SharedWaits(log EventLog) EventLog {
	return &sharedWaits{EventLog: log, moved: make(chan struct{})}
}

type sharedWaits struct {
	EventLog
	mu       sync.Mutex
	newest   string        // the log's newest position, as the watcher last read it; "" until then
	moved    chan struct{} // closed when newest changes, then replaced
	waiters  int
	watching bool
}

// WaitForEvents returns once the newest position is not after: an event follows it, or the log went back.
func (s *sharedWaits) WaitForEvents(ctx context.Context, after string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() { s.waiters-- }()
	if s.waiters++; !s.watching {
		s.watching, s.newest = true, "" // not known until read again
		go s.watch()
	}
	for s.newest == "" || s.newest == after {
		moved := s.moved
		s.mu.Unlock()
		select {
		case <-moved:
		case <-ctx.Done():
		}
		s.mu.Lock()
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

func (s *sharedWaits) watch() {
	for {
		s.mu.Lock()
		if s.watching = s.waiters > 0; !s.watching {
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), watchFor)
		newest, err := s.LastEventID(ctx)
		if err == nil {
			s.mu.Lock()
			if newest != s.newest {
				close(s.moved)
				s.moved, s.newest = make(chan struct{}), newest
			}
			s.mu.Unlock()
			err = s.EventLog.WaitForEvents(ctx, newest)
		}
		if err != nil && ctx.Err() == nil { // the log failed; the bound did not end the wait
			time.Sleep(watchRetry)
		}
		cancel()
	}
}
