package inmem

import (
	"context"
	"hash/maphash"
	"sync"
	"time"

	"github.com/petstore/orderd/internal/plan"
	"github.com/petstore/orderd/internal/ratelimit"
)

var _ ratelimit.Limiter = (*Limiter)(nil)

// shards spread callers over locks, so that callers rarely wait for each other.
const shards = 64

// Limiter is a ratelimit.Limiter in the process. It keeps the windows of every caller seen
// this UTC day.
type Limiter struct {
	clock  func() time.Time
	policy ratelimit.BanPolicy
	seed   maphash.Seed
	shards [shards]shard
}

type shard struct {
	mu        sync.Mutex
	callers   map[string]*callerState
	sweptMins int64
}

// callerState is what the rules need to remember of one caller.
type callerState struct {
	minute, minuteCount int64     // minute is Unix seconds / 60
	day, dayCount       int64     // day is Unix seconds / 86400 (UTC days)
	retryAt             time.Time // when the Retry-After of the caller's last first 429 passes
	tooEarly            int64     // requests since then that came before retryAt
	bannedUntil         time.Time
}

// NewLimiter returns a limiter that reads the time from clock (time.Now when nil).
func NewLimiter(clock func() time.Time, policy ratelimit.BanPolicy) *Limiter {
	if clock == nil {
		clock = time.Now
	}
	l := &Limiter{clock: clock, policy: policy, seed: maphash.MakeSeed()}
	for i := range l.shards {
		l.shards[i].callers = map[string]*callerState{}
	}
	return l
}

// Allow applies the rules of package ratelimit to one request, under the caller's lock.
func (l *Limiter) Allow(_ context.Context, caller string, limits plan.Limits) (ratelimit.Decision, error) {
	now := l.clock()
	sec := now.Unix()
	minute, day := floorDiv(sec, 60), floorDiv(sec, 86400)

	sh := &l.shards[maphash.String(l.seed, caller)%shards]
	sh.mu.Lock()
	sh.sweep(now, minute, day)
	st := sh.callers[caller]
	if st == nil {
		st = &callerState{minute: minute, day: day}
		sh.callers[caller] = st
	}
	o := st.step(now, minute, day, limits, l.policy)
	sh.mu.Unlock()
	return ratelimit.Decide(o, limits, now), nil
}

// step is the atomic decision; the Redis script is the same rules in Lua.
func (st *callerState) step(now time.Time, minute, day int64, limits plan.Limits, policy ratelimit.BanPolicy) ratelimit.Outcome {
	// Windows only move forward, as in the Redis script: a clock stepped back must not
	// reopen a window.
	if minute > st.minute {
		st.minute, st.minuteCount = minute, 0
	}
	if day > st.day {
		st.day, st.dayCount = day, 0
	}
	if now.Before(st.bannedUntil) {
		return ratelimit.Outcome{MinuteCount: st.minuteCount, DayCount: st.dayCount, BannedUntil: st.bannedUntil}
	}
	if st.minuteCount < limits.PerMinute && st.dayCount < limits.PerDay {
		st.minuteCount++
		st.dayCount++
		return ratelimit.Outcome{Admitted: true, MinuteCount: st.minuteCount, DayCount: st.dayCount}
	}
	o := ratelimit.Outcome{MinuteCount: st.minuteCount, DayCount: st.dayCount}
	if now.Before(st.retryAt) { // too early: the client did not wait for its Retry-After
		st.tooEarly++
		if policy.After > 0 && st.tooEarly >= policy.After {
			st.bannedUntil = now.Add(policy.For)
			st.retryAt, st.tooEarly = time.Time{}, 0
			o.BannedUntil = st.bannedUntil
		}
		return o
	}
	// A first 429: the client is told to wait until the binding window ends.
	st.retryAt = ratelimit.Decide(o, limits, now).Binding.End
	st.tooEarly = 0
	return o
}

// sweep drops, once a minute, the callers whose day is over and who are neither banned nor
// waiting out a Retry-After, so memory follows the callers of the day, not of all time.
func (sh *shard) sweep(now time.Time, minute, day int64) {
	if sh.sweptMins == minute {
		return
	}
	sh.sweptMins = minute
	for k, st := range sh.callers {
		if st.day < day && !now.Before(st.bannedUntil) && !now.Before(st.retryAt) {
			delete(sh.callers, k)
		}
	}
}

// Len is the number of callers remembered; for tests of the memory bound.
func (l *Limiter) Len() int {
	n := 0
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		n += len(sh.callers)
		sh.mu.Unlock()
	}
	return n
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}
