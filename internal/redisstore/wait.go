package redisstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// waker watches the log for every WaitForEvents of one Events with one blocking XREAD, which
// holds a pooled connection: one per waiter would leave none for requests.
type waker struct {
	mu      sync.Mutex
	newest  streamID      // the log's newest position, as last read; zero when not known
	moved   chan struct{} // closed when newest moves on, then replaced
	waiters int
	running bool
}

// waitBlock bounds each XREAD, so that the watch ends soon after the last waiter leaves.
const waitBlock = 2 * time.Second

// WaitForEvents returns nil once the newest position read is after after ("": any event), or
// at once for no position (the read tells why).
func (e *Events) WaitForEvents(ctx context.Context, after string) error {
	a, ok := parseStreamID(after)
	if !ok && after != "" {
		return nil
	}
	w := &e.wake
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waiters++
	defer func() { w.waiters-- }()
	if !w.running {
		w.running, w.newest = true, streamID{} // known only once read again
		go e.watch()
	}
	for !a.less(w.newest) {
		moved := w.moved
		w.mu.Unlock()
		select {
		case <-moved:
		case <-ctx.Done():
		}
		w.mu.Lock()
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// watch reads where the log stands, then blocks on XREAD after it, while anyone waits; read
// anew each time, as a log lost and begun again behind it would keep XREAD waiting.
func (e *Events) watch() {
	w := &e.wake
	for pause := time.Duration(0); ; {
		w.mu.Lock()
		if w.waiters == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		st, err := e.read(context.Background(), "", 0)
		if err == nil {
			w.mu.Lock()
			if w.newest.less(st.last) { // wake the waiters; one that went back (a lost log) is kept too
				close(w.moved)
				w.moved = make(chan struct{})
			}
			w.newest = st.last
			w.mu.Unlock()
			ctx, cancel := callContext(context.Background(), waitBlock+e.timeout)
			err = e.rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{e.k.ordersEvents, st.last.String()}, Count: 1, Block: waitBlock}).Err()
			cancel()
		}
		if err != nil && !errors.Is(err, redis.Nil) { // Nil: nothing within the block
			pause = min(max(2*pause, 50*time.Millisecond), time.Second)
			time.Sleep(pause)
		} else {
			pause = 0
		}
	}
}
