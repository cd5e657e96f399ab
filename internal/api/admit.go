package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/plan"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/store"
)

// anonymousLimits apply to callers without a valid key, by client address: they slow down
// the guessing of keys.
var anonymousLimits, _ = plan.LimitsFor(plan.Free, plan.Limits{})

// admit decides whether a request under a version's base may reach its route, in this order:
//
//  1. the bearer token, and the key it names (one lookup);
//  2. the caller: the key when it is valid, or else the client address;
//  3. the rate-limit decision for that caller: every request counts, a 401 too, so that
//     guessing keys is limited like any other traffic;
//  4. 401 unless the key is valid or the operation is public.
//
// It runs after routing but before validation, so an unknown route or method is limited and
// authenticated too. A key has one quota for every version. Requests outside the bases pass
// untouched, and so do those of an unlimited operation (the served documents). A request
// whose client hung up meanwhile is no decision: nothing is counted (requestEnded).
func admit(keys auth.KeyStore, limiter ratelimit.Limiter, ct *contract, now func() time.Time, obs Observer, ipv6Prefix int) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if !ct.underBase(req.URL.Path) {
				return next(c)
			}
			ex, _ := c.Get(exchangeKey).(*exchange)
			if ex == nil { // no observe before: the decision holds, without its headers
				ex = &exchange{op: ct.operationAt(c)}
			}
			if ex.op != nil && ex.op.unlimited {
				// No key to look up, nothing to count; the access line names the address.
				ex.caller.Addr = c.RealIP()
				c.SetRequest(req.WithContext(auth.WithCaller(req.Context(), &ex.caller)))
				return next(c)
			}
			// The lookup may answer provisionally from what the key store keeps; the
			// limiter's round trip carries what confirms it (store.Trip, as store.Begin makes).
			ex.trip = store.Trip{Context: req.Context()}
			ctx := context.Context(&ex.trip)
			caller := &ex.caller
			caller.Addr = c.RealIP()
			keyErr := identify(ctx, keys, req.Header.Values("Authorization"), caller, &ex.key)
			c.SetRequest(req.WithContext(auth.WithCaller(ctx, caller)))
			id, limits := rateLimitKey(caller, ipv6Prefix)
			if noDecision(ctx, keyErr) {
				// Who calls is unknown: limiting by address would tell a valid key's client to
				// wait a minute for a store that may be back in a second.
				return undecided(ctx, ex, limits, now(), obs, keyErr)
			}
			d, err := limiter.Allow(ctx, id, limits)
			if err == nil && caller.Key != nil {
				if cerr := store.Confirm(ctx); cerr != nil {
					// The key changed since the lookup: the request has no valid key (or
					// answers 503, as a lookup that cannot reach the key store does).
					caller.Key, keyErr = nil, lookupError(ctx, cerr)
					id, limits = rateLimitKey(caller, ipv6Prefix)
					if noDecision(ctx, keyErr) {
						return undecided(ctx, ex, limits, now(), obs, keyErr)
					}
					d, err = limiter.Allow(ctx, id, limits)
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
				obs.RateLimit("banned")
				return tooManyRequests(d)
			case !d.Allowed:
				obs.RateLimit("limited")
				return tooManyRequests(d)
			}
			obs.RateLimit("admitted")
			if keyErr != nil && (ex.op == nil || !ex.op.public) {
				return keyErr
			}
			return next(c)
		}
	}
}

// identify sets the caller's key (written to key) when Authorization carries a valid one;
// keyErr says why there is none: no or a malformed header, an unknown key, the key store's
// failure, or the request's own end.
func identify(ctx context.Context, keys auth.KeyStore, authorization []string, caller *auth.Caller, key *auth.Key) (keyErr error) {
	token, err := auth.BearerToken(authorization)
	if err != nil {
		return err
	}
	*key, err = keys.Lookup(ctx, auth.HashOf(token))
	if err == nil {
		caller.Key = key
		return nil
	}
	return lookupError(ctx, err)
}

// noDecision reports whether err leaves the request without a rate-limit decision: a store
// cannot be reached, or the request ended.
func noDecision(ctx context.Context, err error) bool {
	return errors.Is(err, store.ErrUnavailable) || requestEnded(ctx, err)
}

// undecided ends a request for which no decision could be made. Its headers describe the
// caller's plan as if nothing had been counted (the minute binds, its whole limit remaining):
// the counts are unknown, and this never claims a quota the caller has not spent; when to
// come back is Retry-After's to say. Only a store's failure is counted as an outcome.
func undecided(ctx context.Context, ex *exchange, limits plan.Limits, now time.Time, obs Observer, err error) error {
	d := ratelimit.Decide(ratelimit.Outcome{}, limits, now)
	ex.limit = &d
	if !requestEnded(ctx, err) {
		obs.RateLimit("unavailable")
	}
	return err
}

// lookupError is why a key lookup (or its confirmation) gave no key.
func lookupError(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, auth.ErrKeyNotFound):
		return auth.ErrUnknownKey
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, store.ErrCorrupt), requestEnded(ctx, err):
		return err
	}
	// A KeyStore fails only in the ways package store names; anything else is a 500.
	return fmt.Errorf("looking up a key: %w", err)
}

// rateLimitKey names the caller to the limiter: the key, or else the client's network (its
// IPv4 address, or its IPv6 /ipv6Prefix).
func rateLimitKey(c *auth.Caller, ipv6Prefix int) (string, plan.Limits) {
	if c.Key != nil {
		return ratelimit.KeyCaller(string(c.Key.Hash)), c.Key.Limits()
	}
	return ratelimit.AddrCaller(c.Addr, ipv6Prefix), anonymousLimits
}

// tooManyRequests is the 429 of d.
func tooManyRequests(d ratelimit.Decision) error {
	secs := int64(d.RetryAfter.Seconds())
	if d.Banned {
		return &problem{http.StatusTooManyRequests, gen.ErrorCodeApiKeyBanned,
			fmt.Sprintf("temporarily banned for sending requests before Retry-After had passed; retry after %d seconds", secs)}
	}
	return &problem{http.StatusTooManyRequests, gen.ErrorCodeRateLimitExceeded,
		fmt.Sprintf("rate limit of %d requests per %s exceeded; retry after %d seconds", d.Binding.Limit, d.Binding.Name, secs)}
}
