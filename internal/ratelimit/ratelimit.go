// Package ratelimit decides whether a caller may make a request: two fixed windows per
// caller (the UTC minute and the UTC day), and temporary bans for callers that keep sending
// after a 429. This package states the rules, and Decide turns every implementation's counts
// into the decision. The counting itself (which window a request counts in, when a ban
// begins) is applied atomically by each implementation: in Go by the memory limiter
// (internal/inmem) and restated in Lua by the Redis one (internal/redisstore/rate.lua), since
// Redis must decide in one step; ratelimittest's conformance suite holds both to the same
// decisions.
package ratelimit

import (
	"context"
	"time"

	"github.com/petstore/orderd/internal/plan"
)

// Limiter makes one decision for one request of one caller.
type Limiter interface {
	// Allow decides for a request of caller, whose plan allows limits. Only an admitted
	// request counts, in both windows.
	Allow(ctx context.Context, caller string, limits plan.Limits) (Decision, error)
}

// BanPolicy says when a caller that ignores Retry-After is banned, and for how long.
type BanPolicy struct {
	// After is the number of too-early requests (sent after a 429, before its Retry-After
	// passed) that starts a ban; the After-th is itself answered as banned. 0: never ban.
	After int64
	// For is how long a ban lasts.
	For time.Duration
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
	Allowed bool
	Banned  bool
	Minute  Window
	Day     Window
	// Binding is the window the X-RateLimit headers describe: the one with the fewest
	// requests remaining, or on a tie the one that ends later, so that Retry-After never
	// points too early. While banned, its Remaining is 0 and its End the ban's end.
	Binding Window
	// RetryAfter is the time until the binding window (or the ban) ends, in whole seconds
	// rounded up, at least 1. Set on every decision: it is also the IETF header's t.
	RetryAfter time.Duration
}

// WindowEnds returns the ends of the UTC minute and the UTC day that now falls in.
func WindowEnds(now time.Time) (minuteEnd, dayEnd time.Time) {
	s := now.Unix()
	return time.Unix(s-mod(s, 60)+60, 0).UTC(), time.Unix(s-mod(s, 86400)+86400, 0).UTC()
}

func mod(a, b int64) int64 { return ((a % b) + b) % b }

// Outcome is what an implementation's atomic step found: whether it admitted the request,
// the counts of both windows after it, and the end of a ban in force.
type Outcome struct {
	Admitted    bool
	MinuteCount int64
	DayCount    int64
	BannedUntil time.Time // zero unless a ban is in force
}

// Decide turns an outcome at now into a decision. Every implementation uses it, so that the
// headers are computed one way.
func Decide(o Outcome, limits plan.Limits, now time.Time) Decision {
	minuteEnd, dayEnd := WindowEnds(now)
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
	d.RetryAfter = max(time.Second, ceilSecond(d.Binding.End.Sub(now)))
	return d
}

func ceilSecond(d time.Duration) time.Duration {
	return (d + time.Second - 1).Truncate(time.Second)
}
