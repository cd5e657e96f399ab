package ratelimit

import (
	"maps"
	"sync"
	"time"

	"github.com/petstore/orderd/internal/order"
)

// Bans remembers the bans a shared limiter (Redis) decided, so that an instance answers a
// banned caller's flood itself as Redis would: during a ban nothing counts or ends it.
type Bans struct {
	max int
	mu  sync.Mutex
	m   map[string]ban
}

type ban struct {
	limits                order.Limits
	until                 time.Time
	minuteCount, dayCount int64
	minuteEnd, dayEnd     time.Time // of the windows the counts are in
}

// NewBans returns a memory of at most max bans; past it, the shared store decides as before.
func NewBans(max int) *Bans { return &Bans{max: max, m: map[string]ban{}} }

// Decision returns the decision for caller at now if a remembered ban, for limits, runs then.
func (b *Bans) Decision(caller string, limits order.Limits, now time.Time) (Decision, bool) {
	b.mu.Lock()
	x, ok := b.m[caller]
	if ok && !now.Before(x.until) {
		delete(b.m, caller)
		ok = false
	}
	b.mu.Unlock()
	if !ok || x.limits != limits {
		return Decision{}, false
	}
	minuteEnd, dayEnd := WindowEnds(now)
	o := Outcome{BannedUntil: x.until}
	if !minuteEnd.After(x.minuteEnd) { // Redis counts in the window it stored until now passes it
		o.MinuteCount, o.MinuteEnd = x.minuteCount, x.minuteEnd
	}
	if !dayEnd.After(x.dayEnd) {
		o.DayCount, o.DayEnd = x.dayCount, x.dayEnd
	}
	return Decide(o, limits, now), true
}

// Remember keeps the ban that outcome o, decided for caller at now, says is running.
func (b *Bans) Remember(caller string, limits order.Limits, o Outcome, now time.Time) {
	if o.BannedUntil.IsZero() || !now.Before(o.BannedUntil) {
		return
	}
	minuteEnd, dayEnd := WindowEnds(now)
	minuteEnd, dayEnd = later(minuteEnd, o.MinuteEnd), later(dayEnd, o.DayEnd)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.m) >= b.max { // the ended ones go first
		maps.DeleteFunc(b.m, func(_ string, x ban) bool { return !now.Before(x.until) })
	}
	if len(b.m) >= b.max {
		return
	}
	b.m[caller] = ban{limits: limits, until: o.BannedUntil, minuteCount: o.MinuteCount, dayCount: o.DayCount,
		minuteEnd: minuteEnd, dayEnd: dayEnd}
}
