package redisstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
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

// Limiter is a ratelimit.Limiter in Redis, shared by every instance, with a local fallback.
type Limiter struct {
	rdb       limiterClient
	batch     *batcher
	bans      *ratelimit.Bans // the bans Redis decided, answered here until they end
	o         LimiterOptions
	k         names
	downUntil atomic.Int64 // Unix ns; Redis is not tried before then
	down      atomic.Bool
}

const maxRememberedBans = 10_000 // about 150 bytes each; Redis answers the rest

// limiterClient is what a Limiter asks of Redis: rate.lua, and a read of a caller's hash.
type limiterClient interface {
	redis.Scripter
	HMGet(ctx context.Context, key string, fields ...string) *redis.SliceCmd
}

// NewLimiter returns a limiter on rdb.
func NewLimiter(rdb limiterClient, o LimiterOptions) (*Limiter, error) {
	k, err := newNames(o.Prefix)
	if err != nil {
		return nil, err
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.RetryEvery <= 0 {
		o.RetryEvery = time.Second
	}
	o.Logger = cmp.Or(o.Logger, discard)
	return &Limiter{rdb: rdb, batch: newBatcher(rdb, o.Timeout), bans: ratelimit.NewBans(maxRememberedBans), o: o, k: k}, nil
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
	s := &rateStep{key: l.k.rateLimit(caller), now: now.UnixMilli(),
		limits: [4]int64{limits.PerMinute, limits.PerDay, l.o.Ban.After, l.o.Ban.For.Milliseconds()}}
	c := carriedOf(ctx, l.k.prefix)
	if c != nil && !c.read {
		s.with = &l.k
	}
	if err := classify(ctx, l.batch.decide(ctx, l.rdb, s)); err != nil {
		return l.failed(ctx, caller, limits, err)
	}
	if l.down.CompareAndSwap(true, false) {
		l.o.Logger.Info("rate limiter: redis answers again; limits are shared again")
	}
	if s.bad != nil {
		return ratelimit.Decision{}, s.bad
	}
	if s.orders != nil {
		c.keep(s.orders, s.keyVer)
	}
	res := s.outcome
	o := ratelimit.Outcome{Admitted: res[0] == 1, MinuteCount: res[1], DayCount: res[2],
		MinuteEnd: time.Unix((res[4]+1)*60, 0).UTC(), DayEnd: time.Unix((res[5]+1)*86400, 0).UTC()}
	if res[3] > 0 {
		o.BannedUntil = time.UnixMilli(res[3])
		l.bans.Remember(caller, limits, o, now)
	}
	return ratelimit.Decide(o, limits, now), nil
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

// failed sends an outage to the fallback, when there is one, for RetryEvery.
func (l *Limiter) failed(ctx context.Context, caller string, limits order.Limits, err error) (ratelimit.Decision, error) {
	if !errors.Is(err, order.ErrUnavailable) {
		return ratelimit.Decision{}, fmt.Errorf("rate.lua: %w", err)
	}
	if l.o.Fallback == nil {
		return ratelimit.Decision{}, err
	}
	l.downUntil.Store(l.o.Clock().Add(l.o.RetryEvery).UnixNano())
	if l.down.CompareAndSwap(false, true) {
		l.o.Logger.Warn("rate limiter: redis unavailable; each instance limits on its own until it answers",
			slog.String("error", err.Error()))
	}
	return l.fallback(ctx, caller, limits)
}

func (l *Limiter) fallback(ctx context.Context, caller string, limits order.Limits) (ratelimit.Decision, error) {
	if l.o.OnFallback != nil {
		l.o.OnFallback()
	}
	return l.o.Fallback.Allow(ctx, caller, limits)
}

// Ready makes one rate-limit decision: a Redis out of memory, read-only or busy answers PING.
func Ready(ctx context.Context, rdb limiterClient, prefix string, timeout time.Duration) error {
	l, err := NewLimiter(rdb, LimiterOptions{Prefix: prefix, Timeout: timeout})
	if err != nil {
		return err
	}
	_, err = l.Allow(ctx, "ready:probe", order.Limits{PerMinute: 1 << 50, PerDay: 1 << 50})
	return err
}
