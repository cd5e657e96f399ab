package service

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/petstore/orderd/internal/order"
)

// repeats decides when a line that would repeat on every call is logged: the first at once,
// then at most one a minute per kind, each saying how many it held back. (rate.Sometimes
// neither counts what it held back nor takes a clock, which the tests move by minutes.)
type repeats struct {
	now  func() time.Time
	mu   sync.Mutex
	last map[string]time.Time // the last line of each kind
	held map[string]int64     // calls of each kind since its last line
}

func newRepeats(now func() time.Time) *repeats {
	if now == nil {
		now = time.Now
	}
	return &repeats{now: now, last: map[string]time.Time{}, held: map[string]int64{}}
}

// due reports whether a line of kind is due now (always on restart), and the calls it held back.
func (r *repeats) due(kind string, restart bool) (ok bool, held int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if last, seen := r.last[kind]; seen && !restart && now.Sub(last) < time.Minute {
		r.held[kind]++
		return false, 0
	}
	held = r.held[kind]
	r.last[kind], r.held[kind] = now, 0
	return true, held
}

// outageLog warns of a store outage as the readiness checks meet it: on entering it, every
// minute while it lasts (with the failures since), and when it ends. Requests do not report.
type outageLog struct {
	log     *slog.Logger
	repeats *repeats
	mu      sync.Mutex
	since   time.Time // when the outage began; zero: none
}

// observe takes what a readiness check met; an error but order.ErrUnavailable is no outage.
func (o *outageLog) observe(err error) {
	if err != nil && !errors.Is(err, order.ErrUnavailable) {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.repeats.now()
	downFor := slog.String("down_for", now.Sub(o.since).Round(time.Second).String())
	switch {
	case err == nil && !o.since.IsZero():
		o.since = time.Time{}
		o.log.Info("store answers again", downFor)
	case err == nil:
	case o.since.IsZero():
		o.since = now
		o.repeats.due("outage", true)
		o.log.Warn("store unavailable: answering 503 until it answers again", slog.String("error", err.Error()))
	default:
		if ok, held := o.repeats.due("outage", false); ok {
			o.log.Warn("store still unavailable", slog.String("error", err.Error()), downFor, slog.Int64("failures_since_last_warning", held+1))
		}
	}
}

// faultLog counts each order.Fault and logs at most one a minute per kind: an error when it
// lasts until a restart, a warning when it ends by itself.
type faultLog struct {
	log     *slog.Logger
	count   func(kind string)
	repeats *repeats
}

func (l *faultLog) observe(f *order.Fault) {
	l.count(f.Kind)
	ok, held := l.repeats.due(f.Kind, false)
	if !ok {
		return
	}
	level, msg := slog.LevelWarn, "store fault: "+f.Public
	if f.Lasting {
		level, msg = slog.LevelError, msg+"; not ready until it is mended and the service restarted"
	}
	l.log.LogAttrs(context.Background(), level, msg, slog.String("kind", f.Kind), slog.String("error", f.Err.Error()),
		slog.Int64("repeats_since_last_line", held))
}
