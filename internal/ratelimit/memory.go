package ratelimit

import (
	"container/list"
	"context"
	"hash/maphash"
	"sync"
	"time"

	"github.com/petstore/orderd/internal/order"
)

// shards spread callers over locks, so that callers rarely wait for each other.
const shards = 64

// DefaultMaxAnonymous caps the callers without a key a Memory limiter remembers: under 250 bytes
// each (TestMemoryPerCaller), so about 20 MB. Forgetting only gives a caller a fresh quota.
const DefaultMaxAnonymous = 100_000

// Memory is a Limiter in the process, exact for one instance: the embedded mode's, and the
// Redis limiter's fallback. It keeps every caller seen this UTC day, but
// forgets the least recently seen anonymous callers past a cap, banned ones and those told to
// wait last (keys are bounded already).
type Memory struct {
	clock    func() time.Time
	policy   BanPolicy
	seed     maphash.Seed
	perShard int    // anonymous callers each shard keeps
	onForget func() // called for each anonymous caller forgotten for the cap
	shards   [shards]shard
}

// MemoryOption configures a Memory limiter.
type MemoryOption func(*Memory)

// MaxAnonymous caps the anonymous callers remembered at n, rounded up to a multiple of the
// shards (DefaultMaxAnonymous when n <= 0).
func MaxAnonymous(n int) MemoryOption {
	return func(l *Memory) {
		if n <= 0 {
			n = DefaultMaxAnonymous
		}
		l.perShard = (n + shards - 1) / shards
	}
}

// OnForget sets a function called, outside the locks, for each caller forgotten for the cap.
func OnForget(f func()) MemoryOption {
	return func(l *Memory) { l.onForget = f }
}

type shard struct {
	mu        sync.Mutex
	callers   map[string]*callerState
	anonymous list.List // of *callerState: the anonymous callers, most recently seen first
	sweptMins int64
}

// callerState is what the rules need to remember of one caller; times are Unix ns.
type callerState struct {
	minute, minuteCount int64 // minute is Unix seconds / 60
	day, dayCount       int64 // day is Unix seconds / 86400 (UTC days)
	retryAt             int64 // when the Retry-After of the caller's last first 429 passes
	tooEarly            int64 // requests since then that came before retryAt
	bannedUntil         int64
	id                  string // anonymous callers only, who are on their shard's list at elem
	elem                *list.Element
}

// NewMemory returns a limiter that reads the time from clock (time.Now when nil).
func NewMemory(clock func() time.Time, policy BanPolicy, opts ...MemoryOption) *Memory {
	if clock == nil {
		clock = time.Now
	}
	l := &Memory{clock: clock, policy: policy, seed: maphash.MakeSeed(), onForget: func() {}}
	MaxAnonymous(0)(l)
	for _, o := range opts {
		o(l)
	}
	for i := range l.shards {
		l.shards[i].callers = map[string]*callerState{}
	}
	return l
}

// Allow applies the rules to one request, under the caller's lock.
func (l *Memory) Allow(_ context.Context, caller string, limits order.Limits) (Decision, error) {
	now := l.clock()
	// Truncate floors before 1970 too: its zero is a UTC midnight.
	minute, day := now.Truncate(time.Minute).Unix()/60, now.Truncate(24*time.Hour).Unix()/86400

	sh := &l.shards[maphash.String(l.seed, caller)%shards]
	forgot := 0
	sh.mu.Lock()
	sh.sweep(now.UnixNano(), minute, day)
	st := sh.callers[caller]
	switch {
	case st == nil && Anonymous(caller):
		if sh.anonymous.Len() < l.perShard {
			st = new(callerState)
			st.elem = sh.anonymous.PushFront(st)
		} else { // the least recently seen is forgotten, its state reused: a flood allocates nothing
			st = sh.evictable(now.UnixNano())
			delete(sh.callers, st.id)
			forgot++
			sh.anonymous.MoveToFront(st.elem)
		}
		*st = callerState{minute: minute, day: day, id: caller, elem: st.elem}
		sh.callers[caller] = st
	case st == nil:
		st = &callerState{minute: minute, day: day}
		sh.callers[caller] = st
	case st.id != "":
		sh.anonymous.MoveToFront(st.elem)
	}
	o := st.step(now, minute, day, limits, l.policy)
	sh.mu.Unlock()
	for range forgot {
		l.onForget()
	}
	return Decide(o, limits, now), nil
}

// Peek returns what Allow would decide now, changing nothing.
func (l *Memory) Peek(_ context.Context, caller string, limits order.Limits) (Decision, error) {
	now := l.clock()
	minute, day := now.Truncate(time.Minute).Unix()/60, now.Truncate(24*time.Hour).Unix()/86400
	sh := &l.shards[maphash.String(l.seed, caller)%shards]
	sh.mu.Lock()
	o := Outcome{}
	if st := sh.callers[caller]; st != nil {
		o = st.outcome()
		if minute > st.minute {
			o.MinuteCount, o.MinuteEnd = 0, time.Time{}
		}
		if day > st.day {
			o.DayCount, o.DayEnd = 0, time.Time{}
		}
		if now.UnixNano() < st.bannedUntil {
			o.BannedUntil = time.Unix(0, st.bannedUntil)
		}
	}
	sh.mu.Unlock()
	o.Admitted = o.MinuteCount < limits.PerMinute && o.DayCount < limits.PerDay
	return Decide(o, limits, now), nil
}

// step is the atomic decision; rate.lua is the same rules in Lua.
func (st *callerState) step(now time.Time, minute, day int64, limits order.Limits, policy BanPolicy) Outcome {
	ns := now.UnixNano()
	// Windows only move forward: a clock stepped back must not reopen one.
	if minute > st.minute {
		st.minute, st.minuteCount = minute, 0
	}
	if day > st.day {
		st.day, st.dayCount = day, 0
	}
	if ns < st.bannedUntil {
		o := st.outcome()
		o.BannedUntil = time.Unix(0, st.bannedUntil)
		return o
	}
	if st.minuteCount < limits.PerMinute && st.dayCount < limits.PerDay {
		st.minuteCount++
		st.dayCount++
		o := st.outcome()
		o.Admitted = true
		return o
	}
	o := st.outcome()
	if ns < st.retryAt { // too early: the client did not wait for its Retry-After
		st.tooEarly++
		if policy.After > 0 && st.tooEarly >= policy.After {
			st.bannedUntil = ns + int64(policy.For)
			st.retryAt, st.tooEarly = 0, 0
			o.BannedUntil = time.Unix(0, st.bannedUntil)
		}
		return o
	}
	// A first 429: the client is told to wait until the binding window ends.
	st.retryAt = Decide(o, limits, now).Binding.End.UnixNano()
	st.tooEarly = 0
	return o
}

// evictLook bounds the anonymous callers passed over, as banned or told to wait, per new one.
const evictLook = 8

// evictable returns the anonymous caller to forget for a new one: the least recently seen,
// passing over (to the front) those banned or told to wait, as sweep does, or a flood from
// other addresses would free them. Only a shard full of such callers forgets one anyway.
func (sh *shard) evictable(ns int64) *callerState {
	for range evictLook {
		st := sh.anonymous.Back().Value.(*callerState)
		if ns >= st.bannedUntil && ns >= st.retryAt {
			return st
		}
		sh.anonymous.MoveToFront(st.elem)
	}
	return sh.anonymous.Back().Value.(*callerState)
}

// outcome is the caller's counts, in the windows they are in (perhaps later than now's).
func (st *callerState) outcome() Outcome {
	return Outcome{MinuteCount: st.minuteCount, DayCount: st.dayCount,
		MinuteEnd: time.Unix((st.minute+1)*60, 0).UTC(), DayEnd: time.Unix((st.day+1)*86400, 0).UTC()}
}

// sweep drops, once a minute, callers whose day is over, unless banned or told to wait.
func (sh *shard) sweep(ns, minute, day int64) {
	if sh.sweptMins == minute {
		return
	}
	sh.sweptMins = minute
	for k, st := range sh.callers {
		if st.day < day && ns >= st.bannedUntil && ns >= st.retryAt {
			if st.id != "" {
				sh.anonymous.Remove(st.elem)
			}
			delete(sh.callers, k)
		}
	}
}

// Len is the number of callers remembered; for tests of the memory bound.
func (l *Memory) Len() int {
	n := 0
	for i := range l.shards {
		l.shards[i].mu.Lock()
		n += len(l.shards[i].callers)
		l.shards[i].mu.Unlock()
	}
	return n
}
