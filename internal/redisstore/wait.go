package redisstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// waker watches the log for every WaitForEvents of one Events with one blocking XREAD at a
// time: a blocked XREAD holds a connection of the pool, and a few dozen clients each waiting
// with its own would leave none for the requests. It runs while someone waits.
type waker struct {
	mu      sync.Mutex
	newest  streamID      // the log's newest position, as last read; zero when not known
	moved   chan struct{} // closed when newest moves on, then replaced
	waiters int
	running bool
}

// waitBlock bounds each XREAD, so that the watch ends soon after the last waiter leaves.
const waitBlock = 2 * time.Second

// WaitForEvents returns nil once the newest position read is after after; "" waits for any
// event. An after that is no position returns at once: the read tells why.
func (e *Events) WaitForEvents(ctx context.Context, after string) error {
	a := streamID{}
	if after != "" {
		var ok bool
		if a, ok = parseStreamID(after); !ok {
			return nil
		}
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
			w.mu.Lock()
			return ctx.Err()
		}
		w.mu.Lock()
	}
	return nil
}

// watch reads the log's newest position, then blocks on XREAD after it until an entry comes or
// the block ends, and again, while anyone waits. An error ends nothing: it reads again after a pause.
func (e *Events) watch() {
	w := &e.wake
	var from streamID
	known := false
	for pause := time.Duration(0); ; {
		w.mu.Lock()
		if w.waiters == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		var err error
		if !known {
			var st logState
			if st, err = e.read(context.Background(), "-", 0, ""); err == nil {
				from, known = st.last, true
				w.publish(from)
			}
		} else {
			ctx, cancel := callContext(context.Background(), waitBlock+e.timeout) // its read deadline: Block + 10s
			err = e.rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{e.k.ordersEvents, from.String()}, Count: 1, Block: waitBlock}).Err()
			cancel()
			if errors.Is(err, redis.Nil) { // nothing within the block
				err = nil
			}
			// Where the log stands is read again after each block: an entry came, or the
			// log may have been lost and begun again behind from, where XREAD waits in vain.
			known = false
		}
		if err != nil {
			known = false
			pause = min(max(2*pause, 50*time.Millisecond), time.Second)
			time.Sleep(pause)
		} else {
			pause = 0
		}
	}
}

// publish records the newest position read, and wakes the waiters when it moved on. A newest
// that went back (a Redis that lost the log) is kept too, so that waiters wait for the new one.
func (w *waker) publish(newest streamID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.newest.less(newest) {
		close(w.moved)
		w.moved = make(chan struct{})
	}
	w.newest = newest
}
