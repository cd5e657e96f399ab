package service

import (
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petstore/orderd/internal/store"
)

// outageEvery is how often a store outage is warned of again while it lasts.
const outageEvery = time.Minute

// outageLog warns of an outage of the store without flooding the log: the readiness checks
// (the one serve makes at start, then the probes of a load balancer or an orchestrator) can
// meet a Redis that is down several times a second, for as long as it is down. Requests do
// not report here: without probes, the rate limiter's own warnings (when it falls back to
// limiting alone, and when Redis answers again) are what tells of an outage. It
// warns once on entering the outage, once every outageEvery while it lasts (with how many
// failures it saw since the last warning), and once when the store answers again.
type outageLog struct {
	log   *slog.Logger
	every time.Duration
	now   func() time.Time

	down     atomic.Bool // read without the lock on every success
	mu       sync.Mutex
	since    time.Time // when the outage began
	warned   time.Time // the last warning
	failures int64     // since the last warning
}

func newOutageLog(log *slog.Logger, now func() time.Time) *outageLog {
	if now == nil {
		now = time.Now
	}
	return &outageLog{log: log, every: outageEvery, now: now}
}

// observe reports what a call to the store met: nil, an outage (store.ErrUnavailable), or
// another error, which says nothing about an outage and is left to the caller.
func (o *outageLog) observe(err error) {
	switch {
	case err == nil:
		o.available()
	case errors.Is(err, store.ErrUnavailable):
		o.unavailable(err)
	}
}

func (o *outageLog) unavailable(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	switch {
	case !o.down.Load():
		o.down.Store(true)
		o.since, o.warned, o.failures = now, now, 0
		o.log.Warn("store unavailable: answering 503 until it answers again", slog.String("error", err.Error()))
	case now.Sub(o.warned) >= o.every:
		o.log.Warn("store still unavailable", slog.String("error", err.Error()),
			slog.String("down_for", now.Sub(o.since).Round(time.Second).String()),
			slog.Int64("failures_since_last_warning", o.failures+1))
		o.warned, o.failures = now, 0
	default:
		o.failures++
	}
}

func (o *outageLog) available() {
	if !o.down.Load() {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.down.Load() {
		return
	}
	o.down.Store(false)
	o.log.Info("store answers again", slog.String("down_for", o.now().Sub(o.since).Round(time.Second).String()))
}
