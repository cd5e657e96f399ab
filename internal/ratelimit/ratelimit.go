// Package ratelimit decides whether a caller may make a request: fixed windows of the UTC
// minute and day, and bans for callers that keep sending after a 429.
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
	Allow(ctx context.Context, caller string, limits order.Limits) (Decision, error) // only an admitted request counts
	// Peek returns what Allow would decide now, counting nothing (a refused stream).
	Peek(ctx context.Context, caller string, limits order.Limits) (Decision, error)
}

// BanPolicy bans a caller for For at its After-th request sent after a 429, before its Retry-After (0 never bans).
type BanPolicy struct {
	After int64
	For   time.Duration
}

var DefaultBanPolicy = BanPolicy{After: 30, For: 15 * time.Minute}

const Minute, Day = "minute", "day"

// Window is the state of one window after a decision.
type Window struct {
	Name             string
	Limit, Remaining int64 // Remaining after this request
	End              time.Time
}

// Seconds is the length of the window.
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
	Binding         Window        // the fewest remaining, on a tie the later end; the ban while banned
	RetryAfter      time.Duration // until Binding ends, in whole seconds rounded up, at least 1
}

// WindowEnds returns the ends of the UTC minute and the UTC day that now falls in.
func WindowEnds(now time.Time) (minuteEnd, dayEnd time.Time) {
	now = now.UTC()
	return now.Truncate(time.Minute).Add(time.Minute), now.Truncate(24 * time.Hour).Add(24 * time.Hour)
}

// Outcome is what an implementation's atomic step (Memory, redisstore's rate.lua) found.
type Outcome struct {
	Admitted              bool
	MinuteCount, DayCount int64
	BannedUntil           time.Time // zero unless a ban is in force
	// The ends of the windows counted in, if later than now's (a clock stepped back): windows
	// never move back, and a Retry-After that points early is refused again.
	MinuteEnd, DayEnd time.Time
}

// Decide turns an outcome at now into a decision, the same way for every implementation.
func Decide(o Outcome, limits order.Limits, now time.Time) Decision {
	minuteEnd, dayEnd := WindowEnds(now)
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

// Caller ids: key:<hash>, addr:<IPv4>, addr:<IPv6 prefix>/<n> (a subscriber has a /64 to move in), addr:invalid.
const addrCaller, DefaultIPv6Prefix = "addr:", 64

// KeyCaller is the caller id of a key's hash.
func KeyCaller(hash string) string { return "key:" + hash }

// AddrCaller is the caller id of a request without a valid key from addr, IPv6 by its ipv6Prefix bits.
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

// parseAddr reads an address perhaps bracketed, zoned or with a port.
func parseAddr(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	if err != nil {
		ap, perr := netip.ParseAddrPort(s)
		a, err = ap.Addr(), perr
	}
	return a.Unmap().WithZone(""), err == nil
}

// ClientAddr is the client's address of a request from peer with X-Forwarded-For lines xff: the peer unless
// trusted, else the rightmost untrusted hop (the client-written ones on the left are never believed), or the
// peer if a hop is no address.
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
	for i := len(hops) - 1; ; i-- {
		if a, ok := parseAddr(strings.TrimSpace(hops[i])); !ok {
			return p.String()
		} else if !isTrusted(a) || i == 0 {
			return a.String()
		}
	}
}

// CheckIPv6Prefix says whether bits can be the prefix length of IPv6 callers.
func CheckIPv6Prefix(bits int) error {
	if bits < 1 || bits > 128 {
		return fmt.Errorf("IPv6 prefix length %d is not within 1 and 128", bits)
	}
	return nil
}

// Bans remembers the bans a shared limiter (Redis) decided, so that an instance answers a
// banned caller's flood itself: during a ban nothing counts or ends it.
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
	x, ok := b.m[caller] // an ended ban stays until Remember needs its room
	b.mu.Unlock()
	if !ok || x.limits != limits || !now.Before(x.o.BannedUntil) {
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

// Remember keeps the ban o, decided at now, says is running.
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

// DefaultMaxAnonymous caps the keyless callers a Memory keeps (<250 B each, ~20 MB); forgetting gives a fresh quota.
const DefaultMaxAnonymous = 100_000

// Memory is a Limiter in the process (the embedded mode's, and the Redis limiter's fallback). Past a cap it
// forgets the least recently seen anonymous callers, banned ones and those told to wait last (keys are bounded).
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

// MemoryOption configures a Memory.
type MemoryOption func(*Memory)

// MaxAnonymous caps the anonymous callers remembered at n (DefaultMaxAnonymous when n <= 0).
func MaxAnonymous(n int) MemoryOption { return func(l *Memory) { l.maxAnonymous = n } }

// OnForget sets a function called, outside the lock, for each caller forgotten for the cap.
func OnForget(f func()) MemoryOption { return func(l *Memory) { l.onForget = f } }

// callerState is what the rules remember of a caller; times are Unix ns.
type callerState struct {
	minute, minuteCount, day, dayCount int64 // minute and day since 1970
	retryAt, tooEarly                  int64 // the last first 429's Retry-After; requests before it since
	bannedUntil                        int64
	id                                 string // anonymous callers only, who are on the list at elem
	elem                               *list.Element
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

// at returns the time, its minute and day (Truncate floors before 1970 too).
func (l *Memory) at() (now time.Time, minute, day int64) {
	now = l.clock()
	return now, now.Truncate(time.Minute).Unix() / 60, now.Truncate(24*time.Hour).Unix() / 86400
}

func (l *Memory) Allow(_ context.Context, caller string, limits order.Limits) (Decision, error) {
	now, minute, day := l.at()
	forgot := false
	l.mu.Lock()
	l.sweep(now.UnixNano(), minute, day)
	st := l.callers[caller]
	switch {
	case st == nil && strings.HasPrefix(caller, addrCaller): // no key: may be forgotten
		if l.anonymous.Len() < l.maxAnonymous {
			st = new(callerState)
			st.elem = l.anonymous.PushFront(st)
		} else { // the least recently seen is forgotten, its state reused
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

// roll moves st's windows to now's, only forward (a stepped-back clock reopens none): its counts, windows and ban.
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

// evictable returns the anonymous caller to forget: the least recently seen, passing over (to
// the front) up to 8 banned or told to wait, else a flood from other addresses would free them.
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

// Len is the number of callers remembered.
func (l *Memory) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.callers)
}
