package service

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/petstore/orderd/internal/order"
)

// storeLog logs what the stores meet without a line per call: an outage as the readiness
// checks meet it (on entering it, every minute while it lasts, and when it ends), and each
// order.Fault, counted every time, at most once a minute per kind. (rate.Sometimes neither
// counts the lines it held back, which are logged, nor takes a clock, which tests move.)
type storeLog struct {
	log   *slog.Logger
	now   func() time.Time
	count func(kind string) // of faults
	mu    sync.Mutex
	last  map[string]time.Time // the last line of each kind
	held  map[string]int64     // calls of each kind since its last line
	since time.Time            // when the outage began; zero: none
}

func newStoreLog(log *slog.Logger, now func() time.Time, count func(kind string)) *storeLog {
	if now == nil {
		now = time.Now
	}
	return &storeLog{log: log, now: now, count: count, last: map[string]time.Time{}, held: map[string]int64{}}
}

// due reports, under l.mu, whether a line of kind is due now (always on restart), and the
// calls it held back.
func (l *storeLog) due(kind string, restart bool) (ok bool, held int64) {
	if last, seen := l.last[kind]; seen && !restart && l.now().Sub(last) < time.Minute {
		l.held[kind]++
		return false, 0
	}
	held = l.held[kind]
	l.last[kind], l.held[kind] = l.now(), 0
	return true, held
}

// outage takes what a readiness check met; an error but order.ErrUnavailable is no outage.
func (l *storeLog) outage(err error) {
	if err != nil && !errors.Is(err, order.ErrUnavailable) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	downFor := slog.String("down_for", l.now().Sub(l.since).Round(time.Second).String())
	switch {
	case err == nil && !l.since.IsZero():
		l.since = time.Time{}
		l.log.Info("store answers again", downFor)
	case err == nil:
	case l.since.IsZero():
		l.since = l.now()
		l.due("outage", true)
		l.log.Warn("store unavailable: answering 503 until it answers again", slog.String("error", err.Error()))
	default:
		if ok, held := l.due("outage", false); ok {
			l.log.Warn("store still unavailable", slog.String("error", err.Error()), downFor, slog.Int64("failures_since_last_warning", held+1))
		}
	}
}

// fault logs f as an error when it lasts until a restart, a warning when it ends by itself.
func (l *storeLog) fault(f *order.Fault) {
	l.count(f.Kind)
	l.mu.Lock()
	ok, held := l.due(f.Kind, false)
	l.mu.Unlock()
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
