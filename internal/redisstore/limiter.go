package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/plan"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/store"
)

var _ ratelimit.Limiter = (*Limiter)(nil)

// LimiterOptions configure a Limiter.
type LimiterOptions struct {
	Prefix  string        // starts every key; see docs/redis-layout.md
	Timeout time.Duration // bounds each decision's round trip
	// Clock is the time the decisions use (time.Now when nil). It is the caller's clock, not
	// Redis's TIME: the script takes it as an argument, which lets one test suite drive the
	// memory and the Redis limiter alike, and the script never lets a window move backwards,
	// so instances whose clocks differ can shift a window's edge by their skew but never
	// admit more than a window's limit.
	Clock func() time.Time
	Ban   ratelimit.BanPolicy
	// Fallback decides while Redis is out (no answer within Timeout, no connection, or a
	// reply saying it cannot do the work now); nil means such requests fail with
	// store.ErrUnavailable.
	Fallback ratelimit.Limiter
	// RetryEvery is how long Redis is left alone after a failure before it is tried again, so
	// that an outage does not cost every request a timeout.
	RetryEvery time.Duration
	// OnFallback, when set, is called for every decision the fallback makes (for metrics).
	OnFallback func()
	Logger     *slog.Logger
}

// Limiter is a ratelimit.Limiter in Redis, shared by every instance: one Lua script makes
// each decision in one round trip. When Redis cannot be reached it can fall back to a
// limiter of the instance's own.
type Limiter struct {
	rdb       redis.Scripter
	batch     *batcher        // bounds and batches each decision's round trip (batch.go)
	bans      *ratelimit.Bans // the bans Redis decided, answered here until they end
	o         LimiterOptions
	k         names        // of the versions a request's round trip reads (see Allow)
	downUntil atomic.Int64 // Unix ns; Redis is not tried before then
	down      atomic.Bool
}

// NewLimiter returns a limiter on rdb.
func NewLimiter(rdb redis.Scripter, o LimiterOptions) (*Limiter, error) {
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
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Limiter{rdb: rdb, batch: newBatcher(rdb, o.Timeout), bans: ratelimit.NewBans(maxRememberedBans), o: o, k: k}, nil
}

// maxRememberedBans bounds the bans a Limiter answers itself (ratelimit.Bans): about 150
// bytes each. The bans past it are answered by Redis, as all were before.
const maxRememberedBans = 10_000

// Allow runs rate.lua for caller. The caller's keys share one hash tag, so the script runs on
// Redis Cluster too.
//
// Within a request's store.Trip whose round trip is still to come, the script is sent with
// the reads of the orders' and the keys' versions, in one pipeline: the stores answer the
// request's later steps from them (carried).
//
// A caller banned by Redis is answered from the instance's memory of the ban until it ends:
// the same decision, without the round trip (so a banned flood costs Redis nothing).
//
// Only an outage of Redis (see classify) sends decisions to the fallback. A request whose
// own context has ended gets the context's error and changes nothing: a client that hangs
// up must not switch off the shared limits for everyone else.
func (l *Limiter) Allow(ctx context.Context, caller string, limits plan.Limits) (ratelimit.Decision, error) {
	if err := ctx.Err(); err != nil {
		return ratelimit.Decision{}, err
	}
	now := l.o.Clock()
	// A caller that Redis banned is answered here until the ban ends, as Redis would answer
	// (ratelimit.Bans says why that is exact), whether Redis answers meanwhile or not.
	if d, ok := l.bans.Decision(caller, limits, now); ok {
		return d, nil
	}
	if l.o.Fallback != nil && now.UnixNano() < l.downUntil.Load() {
		return l.fallback(ctx, caller, limits)
	}
	// The batcher bounds the call (batch.go), with no timer per request.
	s := &rateStep{key: l.key(caller), now: now.UnixMilli(),
		limits: [4]int64{limits.PerMinute, limits.PerDay, l.o.Ban.After, l.o.Ban.For.Milliseconds()}}
	c := carriedOf(ctx, l.o.Prefix)
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
	if s.orders != nil { // read with the decision, for c
		c.keep(s.orders, s.keyVer)
	}
	res := s.outcome
	o := ratelimit.Outcome{Admitted: res[0] == 1, MinuteCount: res[1], DayCount: res[2]}
	if res[3] > 0 {
		o.BannedUntil = time.UnixMilli(res[3])
		l.bans.Remember(caller, limits, o, now)
	}
	return ratelimit.Decide(o, limits, now), nil
}

// pipeliner is the part of a go-redis client that sends several commands in one round trip.
type pipeliner interface {
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
}

// failed handles a classified error: an outage goes to the fallback, when there is one, and
// keeps Redis alone for RetryEvery; the request's own cancellation, or a bug in rate.lua,
// is returned as it is and leaves Redis's state as it was.
func (l *Limiter) failed(ctx context.Context, caller string, limits plan.Limits, err error) (ratelimit.Decision, error) {
	if !errors.Is(err, store.ErrUnavailable) {
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

func (l *Limiter) fallback(ctx context.Context, caller string, limits plan.Limits) (ratelimit.Decision, error) {
	if l.o.OnFallback != nil {
		l.o.OnFallback()
	}
	return l.o.Fallback.Allow(ctx, caller, limits)
}

// key is the caller's hash. Caller ids (package ratelimit builds them) hold no brace, so the
// hash tag is the whole caller.
func (l *Limiter) key(caller string) string {
	return "{" + l.o.Prefix + ":rl:" + caller + "}"
}
