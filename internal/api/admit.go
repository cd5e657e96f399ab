package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
)

// anonymousLimits apply to callers without a valid key, by address: they slow key guessing.
var anonymousLimits, _ = order.LimitsFor(order.Free, order.Limits{})

// admit decides whether a request under a version's base may reach its route (docs/design.md,
// "Admission, in one step"); before validation, so an unknown route or method counts too.
func admit(keys order.KeyStore, limiter ratelimit.Limiter, streams *streams, ct *contract, now func() time.Time, obs Observer, ipv6Prefix int) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if !ct.underBase(req.URL.Path) {
				return next(c)
			}
			ex, _ := c.Get(exchangeKey).(*exchange)
			if ex == nil { // no observe before: the decision holds, without headers
				ex = &exchange{op: ct.operationAt(c)}
			}
			ex.caller.Addr = c.RealIP()
			if ex.op != nil && ex.op.unlimited {
				c.SetRequest(req.WithContext(WithCaller(req.Context(), &ex.caller)))
				return next(c)
			}
			// The lookup may answer provisionally; the limiter's round trip confirms it.
			ex.trip = order.Trip{Context: req.Context()}
			ctx := context.Context(&ex.trip)
			caller := &ex.caller
			var keyErr error
			if token, err := BearerToken(req.Header.Values("Authorization")); err != nil {
				keyErr = err
			} else if ex.key, err = keys.Lookup(ctx, order.HashOf(token)); err != nil {
				keyErr = lookupError(ctx, err)
			} else {
				caller.Key = &ex.key
			}
			c.SetRequest(req.WithContext(WithCaller(ctx, caller)))
			id, limits := rateLimitKey(caller, ipv6Prefix)
			if noDecision(ctx, keyErr) {
				// Who calls is unknown: no limiting by address (docs/design.md).
				return undecided(ctx, ex, limits, now(), obs, keyErr)
			}
			// A stream holds one of its key's places from here to its end. Past them the
			// request is refused, and counts in no window: the limiter is only asked.
			decide, streamsFull := limiter.Allow, false
			if caller.Key != nil && asksForStream(c.Path(), req) {
				if name := caller.Key.Name; streams.take(name) {
					defer streams.release(name)
				} else {
					decide, streamsFull = limiter.Peek, true
				}
			}
			d, err := decide(ctx, id, limits)
			if err == nil && caller.Key != nil {
				if cerr := order.Confirm(ctx); cerr != nil {
					// The key changed since the lookup: no valid key (or a 503).
					caller.Key, keyErr = nil, lookupError(ctx, cerr)
					id, limits = rateLimitKey(caller, ipv6Prefix)
					if err = keyErr; !noDecision(ctx, err) {
						d, err = limiter.Allow(ctx, id, limits)
					}
					streamsFull = false
				}
			}
			switch {
			case noDecision(ctx, err):
				return undecided(ctx, ex, limits, now(), obs, err)
			case err != nil:
				return err
			}
			ex.limit = &d
			switch {
			case d.Banned:
				ex.rateLimited(obs, "banned")
				return tooManyRequests(d)
			case !d.Allowed:
				ex.rateLimited(obs, "limited")
				return tooManyRequests(d)
			}
			if streamsFull {
				ex.noRetryAfter = true
				return streams.errTooManyStreams()
			}
			ex.rateLimited(obs, "admitted")
			if keyErr != nil && (ex.op == nil || !ex.op.public) {
				return keyErr
			}
			return next(c)
		}
	}
}

// rateLimited records admit's outcome once for both who read it: the metrics and the span.
func (ex *exchange) rateLimited(obs Observer, outcome string) {
	ex.rateLimit = outcome
	obs.RateLimit(outcome)
}

// noDecision reports whether err leaves the request without a rate-limit decision.
func noDecision(ctx context.Context, err error) bool {
	return errors.Is(err, order.ErrUnavailable) || requestEnded(ctx, err)
}

// undecided ends a request no decision could be made for. Its headers describe the plan as if
// nothing had been counted: the counts are unknown, and it claims no quota unspent.
func undecided(ctx context.Context, ex *exchange, limits order.Limits, now time.Time, obs Observer, err error) error {
	d := ratelimit.Decide(ratelimit.Outcome{}, limits, now)
	ex.limit = &d
	if !requestEnded(ctx, err) {
		ex.rateLimited(obs, "unavailable")
	}
	return err
}

func lookupError(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, order.ErrKeyNotFound):
		return ErrUnknownKey
	case errors.Is(err, order.ErrUnavailable), errors.Is(err, order.ErrCorrupt), requestEnded(ctx, err):
		return err
	}
	// A KeyStore fails only in the ways package order names: anything else is a 500.
	return fmt.Errorf("looking up a key: %w", err)
}

// rateLimitKey names the caller to the limiter: the key, or else the client's network.
func rateLimitKey(c *Caller, ipv6Prefix int) (string, order.Limits) {
	if c.Key != nil {
		return ratelimit.KeyCaller(string(c.Key.Hash)), c.Key.Limits()
	}
	return ratelimit.AddrCaller(c.Addr, ipv6Prefix), anonymousLimits
}

func tooManyRequests(d ratelimit.Decision) error {
	secs := int64(d.RetryAfter.Seconds())
	if d.Banned {
		return &problem{http.StatusTooManyRequests, gen.ErrorCodeApiKeyBanned,
			fmt.Sprintf("temporarily banned for sending requests before Retry-After had passed; retry after %d seconds", secs)}
	}
	return &problem{http.StatusTooManyRequests, gen.ErrorCodeRateLimitExceeded,
		fmt.Sprintf("rate limit of %d requests per %s exceeded; retry after %d seconds", d.Binding.Limit, d.Binding.Name, secs)}
}
