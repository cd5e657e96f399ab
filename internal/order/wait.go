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

// WaitForEvents returns once the newest position is not after: an event follows it, or the log went back. A caller
// that read a position the watcher has not yet seen waits for the event after it, not for the watcher to catch up.
func (s *sharedWaits) WaitForEvents(ctx context.Context, after string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() { s.waiters-- }()
	if s.waiters++; !s.watching {
		s.watching, s.newest = true, "" // not known until read again
		go s.watch()
	}
	if seen := s.newest; seen != "" && seen != after { // after may be newer than the watcher has read
		s.mu.Unlock()
		newest, err := s.LastEventID(ctx)
		s.mu.Lock()
		if err != nil || newest != after {
			return ctx.Err() // nil: the caller's next read finds what follows, or the log's error
		}
		for s.newest == seen { // the watcher's next read is at after or past it
			if err := s.nextMove(ctx); err != nil {
				return err
			}
		}
	}
	for s.newest == "" || s.newest == after {
		if err := s.nextMove(ctx); err != nil {
			return err
		}
	}
	return nil
}

// nextMove waits, s.mu held, for the watcher's next change of newest, or ctx's end.
func (s *sharedWaits) nextMove(ctx context.Context) error {
	moved := s.moved
	s.mu.Unlock()
	select {
	case <-moved:
	case <-ctx.Done():
	}
	s.mu.Lock()
	return ctx.Err()
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
