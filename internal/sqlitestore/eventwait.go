package sqlitestore

import (
	"context"
	"strconv"
	"time"
)

// A wait reads the wal-index header every headerPoll: a few loads of shared memory. It queries
// when the header moved, or, where the page is not mapped, every queryPoll.
const (
	headerPoll = 10 * time.Millisecond
	queryPoll  = 100 * time.Millisecond
)

// WaitForEvents waits until the newest id is not after: an event follows it, or it is not a
// position this log reached, which Events refuses. Any process's commit rewrites the header
// (docs/design.md, "Modes and data flow"), so an unchanged header is no new event. A failed
// query returns nil too: the read that follows reports it.
func (e *Events) WaitForEvents(ctx context.Context, after string) error {
	tick := time.NewTicker(headerPoll)
	defer tick.Stop()
	var (
		seen    walHeader
		queried time.Time // zero: not yet
	)
	for {
		h, ok := e.db.cache.wal.Load().header() // before the query: a commit after it moves it
		if queried.IsZero() || (ok && h != seen) || (!ok && time.Since(queried) >= queryPoll) {
			// A point read: its context is not watched (cachedRead says why).
			newest, err := e.newest(context.WithoutCancel(ctx))
			if err != nil || strconv.FormatInt(newest, 10) != after {
				return nil
			}
			seen, queried = h, time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
