package redisstore

import (
	"context"
	"sync/atomic"
	"time"
)

// freshness tells whether what a store learned from Redis by polling is recent enough to
// answer from without asking again: within a few poll intervals. When polls fail (Redis is
// down), it goes stale, and the store asks Redis directly, and so fails as it should.
type freshness struct {
	polledAt atomic.Int64 // Unix ns of the last successful poll; 0 before the first
	every    atomic.Int64 // the poll interval, ns; 0 while no poller runs
}

func (f *freshness) fresh() bool {
	every := f.every.Load()
	return every > 0 && time.Now().UnixNano()-f.polledAt.Load() < 3*every
}

// poll calls once every interval until ctx ends, recording each success.
func (f *freshness) poll(ctx context.Context, every time.Duration, once func(context.Context) error) {
	f.every.Store(int64(every))
	defer f.every.Store(0)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if once(ctx) == nil {
			f.polledAt.Store(time.Now().UnixNano())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
