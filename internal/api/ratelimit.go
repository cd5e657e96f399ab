package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
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

// limit decides for every request under /v1, before authentication, so that every answer
// counts and carries the headers, 401s included. The headers are written at the moment the
// status is, because the generated responses write their declared headers (left zero by
// the handlers) just before that and would overwrite anything set earlier.
func limit(l ratelimit.Limiter, now func() time.Time, obs Observer) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			caller := auth.CallerFrom(c.Request().Context())
			id, limits := rateLimitKey(caller)
			var d ratelimit.Decision
			var err error
			if caller != nil && caller.Key == nil && errors.Is(caller.KeyErr, store.ErrUnavailable) {
				// The key could not be looked up: who the caller is cannot be known, and
				// limiting it by address would tell a client of a valid key to wait out a
				// minute for a store that may be back in a second.
				err = caller.KeyErr
			} else {
				d, err = l.Allow(c.Request().Context(), id, limits)
			}
			if errors.Is(err, store.ErrUnavailable) {
				// No decision could be made: the answer is a 503, and its headers say that
				// nothing may be sent until its Retry-After.
				d = ratelimit.Decide(ratelimit.Outcome{MinuteCount: limits.PerMinute, DayCount: limits.PerDay}, limits, now())
				d.Binding.End = now().Add(retryAfterUnavailable * time.Second)
				d.RetryAfter = retryAfterUnavailable * time.Second
			} else if err != nil {
				return err
			}
			h := newRateLimitHeaders(d)
			res := c.Response()
			res.Before(func() { h.set(res.Header()) })
			switch {
			case err != nil:
				obs.RateLimit("unavailable")
				return err
			case d.Banned:
				obs.RateLimit("banned")
				return tooManyRequests(d)
			case !d.Allowed:
				obs.RateLimit("limited")
				return tooManyRequests(d)
			}
			obs.RateLimit("admitted")
			return next(c)
		}
	}
}

// rateLimitKey names the caller to the limiter: the key (by its hash, which holds nothing a
// log or a Redis key should not), or else the client address.
func rateLimitKey(c *auth.Caller) (string, plan.Limits) {
	if c != nil && c.Key != nil {
		return "key:" + string(c.Key.Hash), c.Key.Limits()
	}
	addr := ""
	if c != nil {
		addr = c.Addr
	}
	return "addr:" + addr, anonymousLimits
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

// rateLimitHeaders are the header values of one decision, made before the answer is written.
type rateLimitHeaders struct {
	limit, remaining, reset string
	ietf, policy            string
	retryAfter              string // only when refused
}

func newRateLimitHeaders(d ratelimit.Decision) rateLimitHeaders {
	b := d.Binding
	t := strconv.FormatInt(int64(d.RetryAfter.Seconds()), 10)
	h := rateLimitHeaders{
		limit:     strconv.FormatInt(b.Limit, 10),
		remaining: strconv.FormatInt(b.Remaining, 10),
		reset:     strconv.FormatInt(b.End.Unix(), 10),
		ietf:      `"` + b.Name + `";r=` + strconv.FormatInt(b.Remaining, 10) + ";t=" + t,
		policy: `"minute";q=` + strconv.FormatInt(d.Minute.Limit, 10) + ";w=60, " +
			`"day";q=` + strconv.FormatInt(d.Day.Limit, 10) + ";w=86400",
	}
	if !d.Allowed {
		h.retryAfter = t
	}
	return h
}

// set writes the headers under their canonical names directly: Header.Set would canonicalize
// (and allocate) each name again on every request.
func (h rateLimitHeaders) set(hdr http.Header) {
	hdr["X-Ratelimit-Limit"] = []string{h.limit}
	hdr["X-Ratelimit-Remaining"] = []string{h.remaining}
	hdr["X-Ratelimit-Reset"] = []string{h.reset}
	hdr["Ratelimit"] = []string{h.ietf}
	hdr["Ratelimit-Policy"] = []string{h.policy}
	if h.retryAfter != "" {
		hdr["Retry-After"] = []string{h.retryAfter}
	}
}
