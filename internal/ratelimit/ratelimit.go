// Package ratelimit decides whether a caller may make a request: fixed windows of the UTC
// minute and day, and bans for callers that keep sending after a 429. Implementations count
// atomically (inmem, redisstore's rate.lua) and Decide turns counts into the decision.
package ratelimit

import (
	"context"
	"time"

	"github.com/petstore/orderd/internal/order"
)

// Limiter makes one decision for one request of one caller.
type Limiter interface {
	// Allow decides for a request of caller; only an admitted request counts.
	Allow(ctx context.Context, caller string, limits order.Limits) (Decision, error)
	// Peek returns what Allow would decide now, counting nothing and moving nothing toward a
	// ban: for answers that are not requests of the quota (a refused stream) and for
	// checking that a caller is not banned.
	Peek(ctx context.Context, caller string, limits order.Limits) (Decision, error)
}

// BanPolicy says when a caller that ignores Retry-After is banned, and for how long.
type BanPolicy struct {
	// After is the number of too-early requests (after a 429, before its Retry-After) that
	// starts a ban, the After-th itself answered as banned; 0 never bans.
	After int64
	For   time.Duration
}

// DefaultBanPolicy is the service's default: the 30th too-early request bans for 15 minutes.
var DefaultBanPolicy = BanPolicy{After: 30, For: 15 * time.Minute}

// Window names.
const (
	Minute = "minute"
	Day    = "day"
)

// Window is the state of one window after a decision.
type Window struct {
	Name      string
	Limit     int64
	Remaining int64 // after this request
	End       time.Time
}

// Seconds is the length of the window, in the IETF header's w parameter.
func (w Window) Seconds() int64 {
	if w.Name == Minute {
		return 60
	}
	return 86400
}

// Decision is what a limiter decided, with what the response headers need.
type Decision struct {
	Allowed, Banned bool
	Minute, Day     Window
	// Binding is the window the headers describe: the fewest remaining, on a tie the later
	// end, so that Retry-After is never early; while banned, 0 remaining until the ban ends.
	Binding Window
	// RetryAfter is the time until Binding ends, in whole seconds rounded up, at least 1.
	RetryAfter time.Duration
}

// WindowEnds returns the ends of the UTC minute and the UTC day that now falls in.
func WindowEnds(now time.Time) (minuteEnd, dayEnd time.Time) {
	now = now.UTC()
	return now.Truncate(time.Minute).Add(time.Minute), now.Truncate(24 * time.Hour).Add(24 * time.Hour)
}

// Outcome is what an implementation's atomic step found.
type Outcome struct {
	Admitted              bool
	MinuteCount, DayCount int64
	BannedUntil           time.Time // zero unless a ban is in force
	// MinuteEnd and DayEnd are the ends of the windows the counts are in, which may be later
	// than now's (windows never move back: a clock stepped back, an instance behind another);
	// zero: now's.
	MinuteEnd, DayEnd time.Time
}

// Decide turns an outcome at now into a decision, the same way for every implementation.
func Decide(o Outcome, limits order.Limits, now time.Time) Decision {
	minuteEnd, dayEnd := WindowEnds(now)
	// The windows counted in end when they do, not when now's would: else a Retry-After
	// would point early, and a client that waited for it would still be refused.
	minuteEnd, dayEnd = later(minuteEnd, o.MinuteEnd), later(dayEnd, o.DayEnd)
	d := Decision{
		Allowed: o.Admitted,
		Minute:  Window{Minute, limits.PerMinute, max(0, limits.PerMinute-o.MinuteCount), minuteEnd},
		Day:     Window{Day, limits.PerDay, max(0, limits.PerDay-o.DayCount), dayEnd},
	}
	d.Binding = d.Day
	if d.Minute.Remaining < d.Day.Remaining {
		d.Binding = d.Minute
	}
	if !o.BannedUntil.IsZero() {
		d.Allowed, d.Banned = false, true
		d.Binding.Remaining, d.Binding.End = 0, o.BannedUntil
	}
	d.RetryAfter = max(time.Second, (d.Binding.End.Sub(now) + time.Second - 1).Truncate(time.Second))
	return d
}

// later returns the later of a and b; a zero b is never later.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
