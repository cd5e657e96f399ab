// Package ratelimit decides whether a caller may make a request: fixed windows of the UTC
// minute and day, and bans for callers that keep sending after a 429. Implementations count
// atomically (Memory, redisstore's rate.lua) and Decide turns counts into the decision. It
// builds every caller id.
package ratelimit

import (
	"container/list"
	"context"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/petstore/orderd/internal/order"
)

// Limiter makes one decision for one request of one caller.
type Limiter interface {
	// Allow decides for a request of caller; only an admitted request counts.
	Allow(ctx context.Context, caller string, limits order.Limits) (Decision, error)
	// Peek returns what Allow would decide now, counting nothing and moving nothing toward a
	// ban: for answers that are not requests of the quota (a refused stream).
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
const Minute, Day = "minute", "day"

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
	// MinuteEnd and DayEnd end the windows the counts are in, later than now's when a clock
	// stepped back or another instance is ahead (windows never move back); zero: now's.
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

// Caller ids, built only here: key:<hash>, addr:<IPv4>, addr:<IPv6 prefix>/<n> (one IPv6
// subscriber commonly has a whole /64 to change addresses within), and addr:invalid.
// DefaultIPv6Prefix is the prefix length by which anonymous IPv6 callers are counted.
const addrCaller, DefaultIPv6Prefix = "addr:", 64

// KeyCaller returns the caller id of a request made with a valid API key of hash hash.
func KeyCaller(hash string) string { return "key:" + hash }

// Anonymous reports whether caller has no key: only such callers may be forgotten.
func Anonymous(caller string) bool { return strings.HasPrefix(caller, addrCaller) }

// AddrCaller returns the caller id of a request without a valid key from addr, as echo's
// RealIP reads it (perhaps bracketed, zoned or with a port), IPv6 by its ipv6Prefix bits.
func AddrCaller(addr string, ipv6Prefix int) string {
	a, ok := parseAddr(addr)
	switch {
	case !ok:
		return addrCaller + "invalid"
	case a.Is4():
		return addrCaller + a.String()
	case CheckIPv6Prefix(ipv6Prefix) != nil:
		ipv6Prefix = DefaultIPv6Prefix
	}
	p, _ := a.Prefix(ipv6Prefix)
	return addrCaller + p.String()
}

// parseAddr reads an address as proxies and servers write one: perhaps bracketed, zoned or
// with a port, which are not part of who the client is.
func parseAddr(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	if err != nil {
		ap, perr := netip.ParseAddrPort(s)
		if perr != nil {
			return netip.Addr{}, false
		}
		a = ap.Addr()
	}
	return a.Unmap().WithZone(""), true
}

// ClientAddr returns the client's address of a request from peer (its RemoteAddr) that
// carries the X-Forwarded-For lines xff: the peer, unless it is in trusted; then, walking the
// hops from the right, the first one not in trusted (or the leftmost, if all are), so that
// hops a client wrote itself, on the left, are never believed. A hop is read as AddrCaller
// reads an address, port and all; a hop that is no address at all makes the record
// untrustworthy, and the peer counts. "" if the peer is no address.
func ClientAddr(peer string, xff []string, trusted []*net.IPNet) string {
	isTrusted := func(a netip.Addr) bool {
		return slices.ContainsFunc(trusted, func(n *net.IPNet) bool { return n.Contains(a.AsSlice()) })
	}
	p, ok := parseAddr(peer)
	if !ok {
		return ""
	}
	if !isTrusted(p) || len(xff) == 0 {
		return p.String()
	}
	hops := strings.Split(strings.Join(xff, ","), ",")
	var a netip.Addr
	for i := len(hops) - 1; i >= 0; i-- {
		if a, ok = parseAddr(strings.TrimSpace(hops[i])); !ok {
			return p.String()
		}
		if !isTrusted(a) {
			break
		}
	}
	return a.String()
}

// CheckIPv6Prefix says whether bits can be the prefix length of IPv6 callers.
func CheckIPv6Prefix(bits int) error {
	if bits < 1 || bits > 128 {
		return fmt.Errorf("IPv6 prefix length %d is not within 1 and 128", bits)
	}
	return nil
}

// Bans remembers the bans a shared limiter (Redis) decided, so that an instance answers a
// banned caller's flood itself as Redis would: during a ban nothing counts or ends it.
type Bans struct {
	max int
	mu  sync.Mutex
	m   map[string]ban
}

type ban struct {
	limits order.Limits
	o      Outcome // banned, with the ends of its counts' windows
}

// NewBans returns a memory of at most max bans; past it, the shared store decides as before.
func NewBans(max int) *Bans { return &Bans{max: max, m: map[string]ban{}} }

// Decision returns the decision for caller at now if a remembered ban, for limits, runs then.
func (b *Bans) Decision(caller string, limits order.Limits, now time.Time) (Decision, bool) {
	b.mu.Lock()
	x, ok := b.m[caller]
	if ok && !now.Before(x.o.BannedUntil) {
		delete(b.m, caller)
		ok = false
	}
	b.mu.Unlock()
	if !ok || x.limits != limits {
		return Decision{}, false
	}
	minuteEnd, dayEnd := WindowEnds(now)
	if minuteEnd.After(x.o.MinuteEnd) { // Redis counts in the window it stored until now passes it
		x.o.MinuteCount, x.o.MinuteEnd = 0, time.Time{}
	}
	if dayEnd.After(x.o.DayEnd) {
		x.o.DayCount, x.o.DayEnd = 0, time.Time{}
	}
	return Decide(x.o, limits, now), true
}

// Remember keeps the ban that outcome o, decided for caller at now, says is running.
func (b *Bans) Remember(caller string, limits order.Limits, o Outcome, now time.Time) {
	if !now.Before(o.BannedUntil) {
		return
	}
	minuteEnd, dayEnd := WindowEnds(now)
	o.MinuteEnd, o.DayEnd = later(minuteEnd, o.MinuteEnd), later(dayEnd, o.DayEnd)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.m) >= b.max { // the ended ones go first
		maps.DeleteFunc(b.m, func(_ string, x ban) bool { return !now.Before(x.o.BannedUntil) })
	}
	if len(b.m) < b.max {
		b.m[caller] = ban{limits, o}
	}
}

// DefaultMaxAnonymous caps the callers without a key a Memory limiter remembers: under 250
// bytes each (TestMemoryPerCaller), so about 20 MB. Forgetting only gives a fresh quota.
const DefaultMaxAnonymous = 100_000

// Memory is a Limiter in the process, exact for one instance: the embedded mode's, and the
// Redis limiter's fallback. It keeps every caller seen this UTC day, but forgets the least
// recently seen anonymous callers past a cap, banned ones and those told to wait last (keys
// are bounded already).
type Memory struct {
	clock        func() time.Time
	policy       BanPolicy
	maxAnonymous int
	onForget     func() // called for each anonymous caller forgotten for the cap
	mu           sync.Mutex
	callers      map[string]*callerState
	anonymous    list.List // of *callerState: the anonymous callers, most recently seen first
	sweptMins    int64
}

// MemoryOption configures a Memory limiter.
type MemoryOption func(*Memory)

// MaxAnonymous caps the anonymous callers remembered at n (DefaultMaxAnonymous when n <= 0).
func MaxAnonymous(n int) MemoryOption { return func(l *Memory) { l.maxAnonymous = n } }

// OnForget sets a function called, outside the lock, for each caller forgotten for the cap.
func OnForget(f func()) MemoryOption { return func(l *Memory) { l.onForget = f } }

// callerState is what the rules need to remember of one caller; times are Unix ns.
type callerState struct {
	minute, minuteCount int64 // minute is Unix seconds / 60
	day, dayCount       int64 // day is Unix seconds / 86400 (UTC days)
	retryAt             int64 // when the Retry-After of the caller's last first 429 passes
	tooEarly            int64 // requests since then that came before retryAt
	bannedUntil         int64
	id                  string // anonymous callers only, who are on the list at elem
	elem                *list.Element
}

// NewMemory returns a limiter that reads the time from clock (time.Now when nil).
func NewMemory(clock func() time.Time, policy BanPolicy, opts ...MemoryOption) *Memory {
	l := &Memory{clock: clock, policy: policy, onForget: func() {}, callers: map[string]*callerState{}}
	for _, o := range opts {
		o(l)
	}
	if l.clock == nil {
		l.clock = time.Now
	}
	if l.maxAnonymous <= 0 {
		l.maxAnonymous = DefaultMaxAnonymous
	}
	return l
}

// at returns the time, its minute and day (Truncate floors before 1970 too: its zero is a UTC
// midnight).
func (l *Memory) at() (now time.Time, minute, day int64) {
	now = l.clock()
	return now, now.Truncate(time.Minute).Unix() / 60, now.Truncate(24*time.Hour).Unix() / 86400
}

// Allow applies the rules to one request, under the lock.
func (l *Memory) Allow(_ context.Context, caller string, limits order.Limits) (Decision, error) {
	now, minute, day := l.at()
	forgot := false
	l.mu.Lock()
	l.sweep(now.UnixNano(), minute, day)
	st := l.callers[caller]
	switch {
	case st == nil && Anonymous(caller):
		if l.anonymous.Len() < l.maxAnonymous {
			st = new(callerState)
			st.elem = l.anonymous.PushFront(st)
		} else { // the least recently seen is forgotten, its state reused: a flood allocates nothing
			st, forgot = l.evictable(now.UnixNano()), true
			delete(l.callers, st.id)
			l.anonymous.MoveToFront(st.elem)
		}
		*st = callerState{minute: minute, day: day, id: caller, elem: st.elem}
		l.callers[caller] = st
	case st == nil:
		st = &callerState{minute: minute, day: day}
		l.callers[caller] = st
	case st.id != "":
		l.anonymous.MoveToFront(st.elem)
	}
	o := st.step(now, minute, day, limits, l.policy)
	l.mu.Unlock()
	if forgot {
		l.onForget()
	}
	return Decide(o, limits, now), nil
}

// Peek returns what Allow would decide now, changing nothing.
func (l *Memory) Peek(_ context.Context, caller string, limits order.Limits) (Decision, error) {
	now, minute, day := l.at()
	st := callerState{minute: minute, day: day}
	l.mu.Lock()
	if p := l.callers[caller]; p != nil {
		st = *p
	}
	l.mu.Unlock()
	o := st.roll(now.UnixNano(), minute, day)
	o.Admitted = o.MinuteCount < limits.PerMinute && o.DayCount < limits.PerDay
	return Decide(o, limits, now), nil
}

// roll moves st's windows to now's, only forward (a clock stepped back must not reopen one),
// and returns its counts, in the windows they are in, and a ban in force.
func (st *callerState) roll(ns, minute, day int64) Outcome {
	if minute > st.minute {
		st.minute, st.minuteCount = minute, 0
	}
	if day > st.day {
		st.day, st.dayCount = day, 0
	}
	o := Outcome{MinuteCount: st.minuteCount, DayCount: st.dayCount,
		MinuteEnd: time.Unix((st.minute+1)*60, 0).UTC(), DayEnd: time.Unix((st.day+1)*86400, 0).UTC()}
	if ns < st.bannedUntil {
		o.BannedUntil = time.Unix(0, st.bannedUntil)
	}
	return o
}

// step is the atomic decision; rate.lua is the same rules in Lua.
func (st *callerState) step(now time.Time, minute, day int64, limits order.Limits, policy BanPolicy) Outcome {
	ns := now.UnixNano()
	o := st.roll(ns, minute, day)
	switch {
	case !o.BannedUntil.IsZero():
	case st.minuteCount < limits.PerMinute && st.dayCount < limits.PerDay:
		st.minuteCount++
		st.dayCount++
		o.MinuteCount, o.DayCount, o.Admitted = st.minuteCount, st.dayCount, true
	case ns < st.retryAt: // too early: the client did not wait for its Retry-After
		if st.tooEarly++; policy.After > 0 && st.tooEarly >= policy.After {
			st.bannedUntil = ns + int64(policy.For)
			st.retryAt, st.tooEarly = 0, 0
			o.BannedUntil = time.Unix(0, st.bannedUntil)
		}
	default: // a first 429: the client is told to wait until the binding window ends
		st.retryAt, st.tooEarly = Decide(o, limits, now).Binding.End.UnixNano(), 0
	}
	return o
}

// evictable returns the anonymous caller to forget for a new one: the least recently seen,
// passing over (to the front) up to 8 banned or told to wait, as sweep does, or a flood from
// other addresses would free them. Only a list full of such callers forgets one anyway.
func (l *Memory) evictable(ns int64) *callerState {
	for range 8 {
		st := l.anonymous.Back().Value.(*callerState)
		if ns >= st.bannedUntil && ns >= st.retryAt {
			return st
		}
		l.anonymous.MoveToFront(st.elem)
	}
	return l.anonymous.Back().Value.(*callerState)
}

// sweep drops, once a minute, callers whose day is over, unless banned or told to wait.
func (l *Memory) sweep(ns, minute, day int64) {
	if l.sweptMins == minute {
		return
	}
	l.sweptMins = minute
	for k, st := range l.callers {
		if st.day < day && ns >= st.bannedUntil && ns >= st.retryAt {
			if st.id != "" {
				l.anonymous.Remove(st.elem)
			}
			delete(l.callers, k)
		}
	}
}

// Len is the number of callers remembered; for tests of the memory bound.
func (l *Memory) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.callers)
}
