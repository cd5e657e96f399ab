package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
)

// Why a request carries no usable key.
var (
	errNoCredentials = &problem{http.StatusUnauthorized, gen.ErrorCodeUnauthorized, "no API key: send the header Authorization: Bearer API_KEY"}
	errMalformed     = &problem{http.StatusUnauthorized, gen.ErrorCodeUnauthorized, "malformed Authorization header: expected Bearer API_KEY"}
	errUnknownKey    = &problem{http.StatusUnauthorized, gen.ErrorCodeUnauthorized, "unknown or revoked API key"}
)

// anonymousLimits apply to callers without a valid key, by address: they slow key guessing.
var anonymousLimits, _ = order.LimitsFor(order.Free, order.Limits{})

// admit is the one step that decides who calls and whether they may (docs/design.md,
// "The HTTP pipeline's other rules"), before conform, so an unknown route or method counts too.
func admit(cfg *Config, streams *streams) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			ex := exchangeOf(c.Request().Context())
			if !ex.base {
				return next(c)
			}
			if ex.addr = c.RealIP(); ex.op != nil && ex.op.unlimited {
				return next(c)
			}
			keyErr := error(nil) // the lookup may answer provisionally; the limiter's round trip confirms it
			if token, err := bearerToken(ex.req.Header.Values("Authorization")); err != nil {
				keyErr = err
			} else if ex.found, err = cfg.Keys.Lookup(ex, order.HashOf(token)); err != nil {
				keyErr = lookupError(ex, err)
			} else {
				ex.key = &ex.found
			}
			caller, limits := ex.caller(cfg.IPv6Prefix)
			if noDecision(ex, keyErr) { // who calls is unknown: no limiting by address
				return ex.undecided(cfg, limits, keyErr)
			}
			// A stream holds one of its key's places from here to its end. Past them the
			// request is refused, and counts in no window: the limiter is only asked.
			decide, streamsFull := cfg.Limiter.Allow, false
			if ex.key != nil && asksForStream(ex) {
				if name := ex.key.Name; streams.hold(name, 1) {
					defer streams.hold(name, -1)
				} else {
					decide, streamsFull = cfg.Limiter.Peek, true
				}
			}
			d, err := decide(ex, caller, limits)
			if err == nil && ex.key != nil {
				if err = order.Confirm(ex); err != nil { // the key changed since the lookup
					ex.key, keyErr, streamsFull = nil, lookupError(ex, err), false
					caller, limits = ex.caller(cfg.IPv6Prefix)
					if err = keyErr; !noDecision(ex, err) {
						d, err = cfg.Limiter.Allow(ex, caller, limits)
					}
				}
			}
			switch {
			case noDecision(ex, err):
				return ex.undecided(cfg, limits, err)
			case err != nil:
				return err
			}
			ex.limited, ex.limit = true, d
			outcome, refusal := "admitted", error(nil)
			switch secs := int64(d.RetryAfter.Seconds()); {
			case d.Banned:
				outcome, refusal = "banned", &problem{http.StatusTooManyRequests, gen.ErrorCodeApiKeyBanned,
					fmt.Sprintf("temporarily banned for sending requests before Retry-After had passed; retry after %d seconds", secs)}
			case !d.Allowed:
				outcome, refusal = "limited", &problem{http.StatusTooManyRequests, gen.ErrorCodeRateLimitExceeded,
					fmt.Sprintf("rate limit of %d requests per %s exceeded; retry after %d seconds", d.Binding.Limit, d.Binding.Name, secs)}
			case streamsFull: // a place frees when one of the key's streams ends, which no clock tells
				ex.noRetryAfter = true
				return &problem{http.StatusTooManyRequests, gen.ErrorCodeTooManyStreams, fmt.Sprintf(
					"this key holds %d streams open on this instance, as many as it may; close one first", cfg.MaxStreamsPerKey)}
			}
			if ex.rateLimit = outcome; refusal == nil && keyErr != nil && (ex.op == nil || !ex.op.public) {
				refusal = keyErr
			}
			cfg.Observer.RateLimit(outcome)
			if refusal != nil {
				return refusal
			}
			return next(c)
		}
	}
}

// asksForStream reports whether the request asks for a stream of the log.
func asksForStream(ex *exchange) bool {
	m := ex.req.Method
	return ex.route == eventsRoute && (m == http.MethodGet || m == http.MethodHead) && acceptsEventStream(ex.req.Header)
}

// undecided ends a request no decision could be made for. Its headers describe the plan as if
// nothing had been counted: the counts are unknown, and it claims no quota unspent.
func (ex *exchange) undecided(cfg *Config, limits order.Limits, err error) error {
	ex.limited, ex.limit = true, ratelimit.Decide(ratelimit.Outcome{}, limits, cfg.Now())
	if !requestEnded(ex, err) {
		ex.rateLimit = "unavailable"
		cfg.Observer.RateLimit(ex.rateLimit)
	}
	return err
}

// caller names the caller to the limiter: the key, or else the client's network.
func (ex *exchange) caller(ipv6Prefix int) (string, order.Limits) {
	if ex.key != nil {
		return ratelimit.KeyCaller(string(ex.key.Hash)), ex.key.Limits()
	}
	return ratelimit.AddrCaller(ex.addr, ipv6Prefix), anonymousLimits
}

// noDecision reports whether err leaves the request without a rate-limit decision.
func noDecision(ctx context.Context, err error) bool {
	return errors.Is(err, order.ErrUnavailable) || requestEnded(ctx, err)
}

// lookupError is a failed lookup as the client is told it; an error order does not name is a 500.
func lookupError(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, order.ErrKeyNotFound):
		return errUnknownKey
	case errors.Is(err, order.ErrUnavailable), errors.Is(err, order.ErrCorrupt), requestEnded(ctx, err):
		return err
	}
	return fmt.Errorf("looking up a key: %w", err)
}

// bearerToken extracts the token of the Authorization fields (RFC 6750): a case-insensitive
// scheme, then a token68, which keeps control characters and spaces out of every later step.
func bearerToken(values []string) (string, error) {
	if len(values) == 0 {
		return "", errNoCredentials
	}
	scheme, token, _ := strings.Cut(values[0], " ")
	token = strings.TrimLeft(token, " ") // "" without a space: no token68
	if len(values) > 1 || !strings.EqualFold(scheme, "Bearer") || !isToken68(token) {
		return "", errMalformed
	}
	return token, nil
}

// isToken68 reports whether s is 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isToken68(s string) bool {
	body := strings.TrimRight(s, "=")
	return body != "" && len(s) <= 512 && strings.Trim(body, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/") == ""
}
