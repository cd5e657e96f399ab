package redisstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
)

var _ ratelimit.Limiter = (*Limiter)(nil)

// LimiterOptions configure a Limiter.
type LimiterOptions struct {
	Prefix     string           // starts every key; see docs/redis-layout.md
	Timeout    time.Duration    // bounds each decision's round trip
	Clock      func() time.Time // time.Now when nil; rate.lua never moves a window backwards
	Ban        ratelimit.BanPolicy
	Fallback   ratelimit.Limiter // decides while Redis is out; nil: order.ErrUnavailable
	RetryEvery time.Duration     // Redis is left alone after a failure (default a second)
	OnFallback func()            // called for every decision of the fallback
	Logger     *slog.Logger
}

// Limiter is a ratelimit.Limiter in Redis, shared by every instance, with a local fallback. The
// decisions in flight go in one pipeline at a time, one rate.lua call per caller (docs/benchmarks.md).
type Limiter struct {
	rdb       redis.UniversalClient
	bans      *ratelimit.Bans // the bans Redis decided, answered here until they end
	o         LimiterOptions
	k         names
	downUntil atomic.Int64 // Unix ns; Redis is not tried before then
	down      atomic.Bool

	mu       sync.Mutex
	queue    []*decision
	flushing bool // a goroutine is sending the queue
}

// decision is one request's rate decision, queued; what follows done is set before it closes.
type decision struct {
	ctx          context.Context
	due          time.Time // queued + timeout: a decision still queued then fails
	key          string    // the caller's hash
	limits       [4]int64  // rate.lua's first arguments: per minute, per day, ban after, ban for (ms)
	now          int64     // Unix ms
	trip         *trip     // reads the versions with the decision; nil for none
	done         chan struct{}
	outcome      []int64 // rate.lua's six numbers
	err          error
	orders, keys *redis.SliceCmd
}

// NewLimiter returns a limiter on rdb.
func NewLimiter(rdb redis.UniversalClient, o LimiterOptions) (*Limiter, error) {
	k, err := newNames(o.Prefix)
	o.Timeout = cmp.Or(max(o.Timeout, 0), DefaultTimeout)
	o.RetryEvery = cmp.Or(max(o.RetryEvery, 0), time.Second)
	if o.Clock == nil {
		o.Clock = time.Now
	}
	o.Logger = cmp.Or(o.Logger, discard)
	return &Limiter{rdb: rdb, bans: ratelimit.NewBans(10_000), o: o, k: k}, err
}

// Allow runs rate.lua for caller (with a order.Trip's reads); only an outage, never a hang-up, falls back.
func (l *Limiter) Allow(ctx context.Context, caller string, limits order.Limits) (ratelimit.Decision, error) {
	if err := ctx.Err(); err != nil {
		return ratelimit.Decision{}, err
	}
	now := l.o.Clock()
	if d, ok := l.bans.Decision(caller, limits, now); ok {
		return d, nil
	}
	if l.o.Fallback != nil && now.UnixNano() < l.downUntil.Load() {
		return l.fallback(ctx, caller, limits)
	}
	d := &decision{ctx: ctx, due: time.Now().Add(l.o.Timeout), key: l.k.rateLimit(caller), now: now.UnixMilli(),
		limits: [4]int64{limits.PerMinute, limits.PerDay, l.o.Ban.After, l.o.Ban.For.Milliseconds()}, done: make(chan struct{})}
	if t := tripOf(ctx, l.k.prefix); t != nil && !t.read {
		d.trip = t
	}
	l.mu.Lock()
	l.queue = append(l.queue, d)
	start := !l.flushing
	l.flushing = true
	l.mu.Unlock()
	if start {
		go l.flush()
	}
	select {
	case <-d.done:
	case <-ctx.Done():
		return ratelimit.Decision{}, ctx.Err()
	}
	switch err := classify(ctx, d.err); {
	case err != nil && !errors.Is(err, order.ErrUnavailable):
		return ratelimit.Decision{}, fmt.Errorf("rate.lua: %w", err)
	case err != nil && l.o.Fallback == nil:
		return ratelimit.Decision{}, err
	case err != nil: // an outage: the fallback decides for RetryEvery
		l.downUntil.Store(l.o.Clock().Add(l.o.RetryEvery).UnixNano())
		if l.down.CompareAndSwap(false, true) {
			l.o.Logger.Warn("rate limiter: redis unavailable; each instance limits on its own until it answers",
				slog.String("error", err.Error()))
		}
		return l.fallback(ctx, caller, limits)
	case l.down.CompareAndSwap(true, false):
		l.o.Logger.Info("rate limiter: redis answers again; limits are shared again")
	}
	if d.orders != nil {
		d.trip.keep(d.orders, d.keys)
	}
	res := d.outcome
	o := ratelimit.Outcome{Admitted: res[0] == 1, MinuteCount: res[1], DayCount: res[2],
		MinuteEnd: time.Unix((res[4]+1)*60, 0).UTC(), DayEnd: time.Unix((res[5]+1)*86400, 0).UTC()}
	if res[3] > 0 {
		o.BannedUntil = time.UnixMilli(res[3])
		l.bans.Remember(caller, limits, o, now)
	}
	return ratelimit.Decide(o, limits, now), nil
}

// flush sends the queue, a pipeline at a time, until it is empty.
func (l *Limiter) flush() {
	for l.mu.Lock(); len(l.queue) > 0; l.mu.Lock() {
		q := l.queue[:min(len(l.queue), 128)]
		l.queue = l.queue[len(q):]
		l.mu.Unlock()
		l.send(q)
	}
	l.queue, l.flushing = nil, false
	l.mu.Unlock()
}

// send decides q's decisions still waiting and not past due in one pipeline, due with the
// earliest: a rate.lua call for each caller and limits, and one read of the versions.
func (l *Limiter) send(q []*decision) {
	defer func() {
		for _, d := range q {
			close(d.done)
		}
	}()
	type caller struct {
		key    string
		limits [4]int64
	}
	type call struct {
		ds   []*decision
		args []any // the limits, then each decision's time
		cmd  *redis.Cmd
	}
	byCaller := map[caller]*call{}
	var calls []*call
	var due time.Time
	var orders, keys *redis.SliceCmd
	for _, d := range q {
		if d.ctx.Err() != nil {
			continue
		} else if !time.Now().Before(d.due) {
			d.err = errCallTimeout // queued behind a pipeline in flight
			continue
		}
		c := byCaller[caller{d.key, d.limits}]
		if c == nil {
			c = &call{args: []any{d.limits[0], d.limits[1], d.limits[2], d.limits[3]}}
			byCaller[caller{d.key, d.limits}], calls = c, append(calls, c)
		}
		c.ds, c.args = append(c.ds, d), append(c.args, strconv.FormatInt(d.now, 10))
		if due.IsZero() || d.due.Before(due) {
			due = d.due
		}
	}
	if len(calls) == 0 {
		return
	}
	ctx, cancel := context.WithDeadlineCause(context.Background(), due, errCallTimeout)
	defer cancel()
	_, err := l.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, c := range calls {
			c.cmd = scriptCmd(ctx, "evalsha", rateScript.Hash(), []string{c.ds[0].key}, c.args)
			_ = p.Process(ctx, sentOnce{c.cmd})
		}
		if slices.ContainsFunc(q, func(d *decision) bool { return d.trip != nil }) {
			orders, keys = p.MGet(ctx, l.k.ordersVersion, l.k.ordersGeneration), p.MGet(ctx, l.k.keysVersion, l.k.keysGeneration)
		}
		return nil
	})
	for _, c := range calls {
		if redis.HasErrorPrefix(c.cmd.Err(), "NOSCRIPT") { // it did not run: again, with the source
			c.cmd = rateScript.Eval(ctx, onceScripter{rdb: l.rdb}, []string{c.ds[0].key}, c.args...)
		} else if c.cmd.Err() == nil && c.cmd.Val() == nil {
			c.cmd.SetErr(err) // the pipeline failed before any reply (WRONGPASS)
		}
		res, rerr := c.cmd.Int64Slice()
		if rerr == nil && len(res) != 6*len(c.ds) {
			rerr = fmt.Errorf("rate.lua returned %v", c.cmd.Val())
		}
		for j, d := range c.ds {
			if d.err = rerr; rerr == nil {
				d.outcome = res[6*j : 6*j+6]
			}
			if d.trip != nil {
				d.orders, d.keys = orders, keys
			}
		}
	}
}

// Peek reads the caller's hash and returns what rate.lua would decide now, writing nothing.
func (l *Limiter) Peek(ctx context.Context, caller string, limits order.Limits) (ratelimit.Decision, error) {
	now := l.o.Clock()
	if d, ok := l.bans.Decision(caller, limits, now); ok {
		return d, nil
	}
	if l.o.Fallback != nil && now.UnixNano() < l.downUntil.Load() {
		return l.o.Fallback.Peek(ctx, caller, limits)
	}
	cctx, cancel := callContext(ctx, l.o.Timeout)
	defer cancel()
	f, err := l.rdb.HMGet(cctx, l.k.rateLimit(caller), "m", "mc", "d", "dc", "ban").Result()
	if err != nil {
		return ratelimit.Decision{}, classify(ctx, err)
	}
	var n [5]int64 // a field missing or not a number counts as 0, as rate.lua reads it
	for i, v := range f {
		s, _ := v.(string)
		n[i], _ = strconv.ParseInt(s, 10, 64)
	}
	o := ratelimit.Outcome{}
	if minute := now.UnixMilli() / 60000; n[0] >= minute {
		o.MinuteCount, o.MinuteEnd = n[1], time.Unix((n[0]+1)*60, 0).UTC()
	}
	if day := now.UnixMilli() / 86400000; n[2] >= day {
		o.DayCount, o.DayEnd = n[3], time.Unix((n[2]+1)*86400, 0).UTC()
	}
	if n[4] > now.UnixMilli() {
		o.BannedUntil = time.UnixMilli(n[4])
	}
	o.Admitted = o.MinuteCount < limits.PerMinute && o.DayCount < limits.PerDay
	return ratelimit.Decide(o, limits, now), nil
}

func (l *Limiter) fallback(ctx context.Context, caller string, limits order.Limits) (ratelimit.Decision, error) {
	if l.o.OnFallback != nil {
		l.o.OnFallback()
	}
	return l.o.Fallback.Allow(ctx, caller, limits)
}

// Ready makes one rate-limit decision: a Redis out of memory, read-only or busy answers PING.
func Ready(ctx context.Context, rdb redis.UniversalClient, prefix string, timeout time.Duration) error {
	l, err := NewLimiter(rdb, LimiterOptions{Prefix: prefix, Timeout: timeout})
	if err == nil {
		_, err = l.Allow(ctx, "ready:probe", order.Limits{PerMinute: 1 << 50, PerDay: 1 << 50})
	}
	return err
}
