package main

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Defaults of retryDoer. The service answers 429 with Retry-After until the end of the
// current window, so a client that waits it out usually gets through on the next attempt;
// five attempts leave room for a busy window without hammering the service.
const (
	defaultMaxAttempts   = 5
	defaultBaseBackoff   = 200 * time.Millisecond
	defaultMaxBackoff    = 30 * time.Second
	defaultMaxRetryAfter = time.Minute
)

// retryDoer is the orderclient.HttpRequestDoer of the example: it sends each request through
// Client and, when the service answers 429 (over the limit) or 503 (its store cannot be
// reached), waits and sends it again.
//
// The wait is Retry-After plus a random share of an exponential backoff ("full jitter"):
// Retry-After because the service counts a request sent before it as too early and bans a
// key that sends too many of those; the jitter so that the many clients refused in the
// same window do not all come back at the same instant and be refused again together.
type retryDoer struct {
	// Client sends each attempt; its Timeout bounds one attempt, not the waits between them.
	Client *http.Client
	// MaxAttempts bounds the attempts, the first included, so that a caller that stays over
	// its limit gets the service's answer instead of waiting forever.
	MaxAttempts int
	// BaseBackoff is the backoff after the first refusal; it doubles with every further one
	// up to MaxBackoff.
	BaseBackoff, MaxBackoff time.Duration
	// MaxRetryAfter is the longest Retry-After worth waiting for (0: any). A longer one (a ban
	// lasts 15 minutes, a spent day window hours) is handed back to the caller as the answer:
	// a command-line tool that silently sleeps that long looks hung.
	MaxRetryAfter time.Duration
	// Sleep waits d or until ctx is done, whichever comes first, and then returns ctx.Err().
	// Tests replace it so that they neither wait nor depend on the wall clock.
	Sleep func(ctx context.Context, d time.Duration) error
	// Int64N returns a random number in [0, n); tests replace it to make the jitter known.
	Int64N func(n int64) int64
}

// newRetryDoer returns a retryDoer with the defaults, sending through client.
func newRetryDoer(client *http.Client) *retryDoer {
	return &retryDoer{
		Client:        client,
		MaxAttempts:   defaultMaxAttempts,
		BaseBackoff:   defaultBaseBackoff,
		MaxBackoff:    defaultMaxBackoff,
		MaxRetryAfter: defaultMaxRetryAfter,
		Sleep:         sleep,
		Int64N:        rand.Int64N,
	}
}

// Do sends req, retrying as the type describes. It returns the first answer that is not
// retried (the last one when the attempts run out) with its body unread, or the error of
// the attempt or of the context.
func (d *retryDoer) Do(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	// A body that cannot be produced again cannot be sent again: one attempt only.
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	attempt := req
	for n := 0; ; n++ {
		res, err := d.Client.Do(attempt)
		if err != nil || !retryable(res.StatusCode) || !replayable || n+1 >= d.MaxAttempts {
			return res, err
		}
		retryAfter, ok := parseRetryAfter(res.Header.Get("Retry-After"))
		if d.MaxRetryAfter > 0 && retryAfter > d.MaxRetryAfter {
			return res, nil
		}
		if !ok {
			retryAfter = 0 // absent or not whole seconds: the backoff alone
		}
		wait := retryAfter + d.jitter(n)
		discard(res)
		if err := d.Sleep(ctx, wait); err != nil {
			return nil, err
		}
		if attempt, err = d.again(req); err != nil {
			return nil, err
		}
	}
}

// jitter is a random duration in [0, backoff) where backoff is BaseBackoff doubled once per
// refusal before this one, capped at MaxBackoff.
func (d *retryDoer) jitter(refusals int) time.Duration {
	backoff := d.BaseBackoff
	// Doubling stops at the cap rather than shifting by refusals, which could overflow.
	for i := 0; i < refusals && backoff < d.MaxBackoff; i++ {
		backoff *= 2
	}
	backoff = min(backoff, d.MaxBackoff)
	if backoff <= 0 {
		return 0
	}
	return time.Duration(d.Int64N(int64(backoff)))
}

// again returns a copy of req to send once more: http.Client.Do may not be given a request
// whose body an earlier attempt consumed.
func (d *retryDoer) again(req *http.Request) (*http.Request, error) {
	next := req.Clone(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		next.Body = body
	}
	return next, nil
}

// retryable reports whether status says "not now, later": the service is over the caller's
// limit or cannot reach its store; both answers carry Retry-After.
func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// parseRetryAfter reads Retry-After as the service sends it, in whole seconds. The HTTP-date
// form is not used by the service and counts as invalid, which falls back to the backoff.
func parseRetryAfter(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	secs, err := strconv.ParseInt(v, 10, 64)
	if err != nil || secs < 0 || secs > int64(time.Duration(1<<62)/time.Second) {
		return 0, false
	}
	return time.Duration(secs) * time.Second, true
}

// discard drains a little of a response that will not be used and closes it, so that its
// connection can carry the next attempt instead of a new one being opened.
func discard(res *http.Response) {
	_, _ = io.CopyN(io.Discard, res.Body, 64<<10)
	_ = res.Body.Close()
}

// sleep waits d, or less if ctx is done first; a cancelled run must not sit out a long wait.
func sleep(ctx context.Context, d time.Duration) error {
	// select picks at random among ready cases: a context already done must win outright.
	if err := ctx.Err(); err != nil {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
