package redisstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
)

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

// Limiter is a ratelimit.Limiter shared by every instance: the decisions in flight go in one pipeline.
type Limiter struct {
	conn
	bans      *ratelimit.Bans // the bans Redis decided, answered here until they end
	o         LimiterOptions
	downUntil atomic.Int64 // Unix ns; Redis is not tried before then
	down      atomic.Bool
	mu        sync.Mutex
	queue     []*decision
	flushing  bool // a goroutine is sending the queue
}

// decision is one request's rate decision, queued; what follows done is set before it closes.
type decision struct {
	rateCall
	ctx      context.Context
	due      time.Time // queued + timeout: a decision still queued then fails
	now      int64     // Unix ms
	trip     *trip     // reads the versions with the decision; nil for none
	done     chan struct{}
	outcome  []int64 // rate.lua's six numbers
	err      error
	versions [2]*redis.SliceCmd // the orders' and the keys', read with it
}

// rateCall is what the decisions of one rate.lua call of a pipeline share.
type rateCall struct {
	key  string   // the caller's hash
	args [5]int64 // rate.lua's first: per minute, per day, ban after, ban for (ms), peek
}

func NewLimiter(rdb redis.UniversalClient, o LimiterOptions) (*Limiter, error) {
	c, err := newConn(rdb, o.Prefix, o.Timeout)
	o.RetryEvery = cmp.Or(max(o.RetryEvery, 0), time.Second)
	if o.Clock == nil {
		o.Clock = time.Now
	}
	o.Logger = cmp.Or(o.Logger, discard)
	return &Limiter{conn: c, bans: ratelimit.NewBans(10_000), o: o}, err
}

// Allow runs rate.lua for caller (with a order.Trip's reads); only an outage, never a hang-up, falls back.
func (l *Limiter) Allow(ctx context.Context, caller string, limits order.Limits) (ratelimit.Decision, error) {
	return l.decide(ctx, caller, limits, 0)
}

// Peek is Allow counting nothing: rate.lua decides as it would, and writes nothing.
func (l *Limiter) Peek(ctx context.Context, caller string, limits order.Limits) (ratelimit.Decision, error) {
	return l.decide(ctx, caller, limits, 1)
}

func (l *Limiter) decide(ctx context.Context, caller string, limits order.Limits, peek int64) (ratelimit.Decision, error) {
	if err := ctx.Err(); err != nil {
		return ratelimit.Decision{}, err
	}
	now := l.o.Clock()
	if d, ok := l.bans.Decision(caller, limits, now); ok {
		return d, nil
	}
	if l.o.Fallback != nil && now.UnixNano() < l.downUntil.Load() {
		return l.fallback(ctx, caller, limits, peek)
	}
	d := &decision{ctx: ctx, due: time.Now().Add(l.timeout), now: now.UnixMilli(), done: make(chan struct{}), rateCall: rateCall{
		l.k.rateLimit(caller), [5]int64{limits.PerMinute, limits.PerDay, l.o.Ban.After, l.o.Ban.For.Milliseconds(), peek}}}
	if t := tripOf(ctx, l.k.prefix); t != nil && !t.read {
		d.trip = t
	}
	l.mu.Lock()
	if l.queue = append(l.queue, d); !l.flushing {
		l.flushing = true
		go l.flush()
	}
	l.mu.Unlock()
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
		return l.fallback(ctx, caller, limits, peek)
	case l.down.CompareAndSwap(true, false):
		l.o.Logger.Info("rate limiter: redis answers again; limits are shared again")
	}
	if d.trip != nil && d.versions[0] != nil { // the round trip read them: keep them if both parse
		o, _, oerr := version(d.versions[0].Val())
		k, _, kerr := version(d.versions[1].Val())
		d.trip.read, d.trip.orders, d.trip.keys = oerr == nil && kerr == nil, o, k // unread: not used
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

// send decides q's decisions still waiting in one pipeline, due with the earliest.
func (l *Limiter) send(q []*decision) {
	calls := map[rateCall][]*decision{}
	due, withTrip := time.Time{}, false
	for _, d := range q {
		if d.ctx.Err() != nil {
			continue
		} else if !time.Now().Before(d.due) {
			d.err = errCallTimeout // queued behind a pipeline in flight
			continue
		}
		calls[d.rateCall] = append(calls[d.rateCall], d)
		if withTrip = withTrip || d.trip != nil; due.IsZero() || d.due.Before(due) {
			due = d.due
		}
	}
	ctx, cancel := context.WithDeadlineCause(context.Background(), due, errCallTimeout)
	defer cancel()
	cmds, versions := map[rateCall]*redis.Cmd{}, [2]*redis.SliceCmd{}
	_, err := l.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for c, ds := range calls {
			args := []any{c.args[0], c.args[1], c.args[2], c.args[3], c.args[4]}
			for _, d := range ds {
				args = append(args, strconv.FormatInt(d.now, 10))
			}
			cmds[c] = rateScript.EvalSha(ctx, onceScripter{process: p.Process}, []string{c.key}, args...)
		}
		if withTrip {
			versions = [2]*redis.SliceCmd{p.MGet(ctx, l.k.ordersVersion...), p.MGet(ctx, l.k.keysVersion...)}
		}
		return nil
	})
	for c, ds := range calls {
		cmd := cmds[c]
		if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") { // it did not run: again, with the source
			cmd = rateScript.Eval(ctx, onceScripter{process: l.rdb.Process}, []string{c.key}, cmd.Args()[4:]...)
		} else if cmd.Err() == nil && cmd.Val() == nil {
			cmd.SetErr(err) // the pipeline failed before any reply (WRONGPASS)
		}
		res, rerr := cmd.Int64Slice()
		for j, d := range ds {
			if d.err = rerr; rerr == nil {
				d.outcome = res[6*j : 6*j+6]
			}
			d.versions = versions
		}
	}
	for _, d := range q {
		close(d.done)
	}
}

func (l *Limiter) fallback(ctx context.Context, caller string, limits order.Limits, peek int64) (ratelimit.Decision, error) {
	if peek == 1 {
		return l.o.Fallback.Peek(ctx, caller, limits)
	} else if l.o.OnFallback != nil {
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
