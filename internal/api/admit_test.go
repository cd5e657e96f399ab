package api_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
)

// failingKeys is a KeyStore whose Lookup fails with err: the HTTP layer's view of a key store
// that cannot be reached, or that holds a record it cannot use.
type failingKeys struct {
	order.KeyStore
	err error
}

func (k failingKeys) Lookup(context.Context, order.Hash) (order.Key, error) {
	return order.Key{}, k.err
}

// TestCorruptKeyRecordIsInternalError: a key whose record cannot be read is a 500 that says
// nothing of the record, never a 503 (retrying cannot mend it); the log line names the record.
func TestCorruptKeyRecordIsInternalError(t *testing.T) {
	logs := &apitest.Log{}
	corrupt := fmt.Errorf("key record osk_s3RBqd (hash 1f2e…): %w: plan %q is unknown", order.ErrCorrupt, "gold")
	h := newHarness(t, func(c *api.Config) {
		c.Keys = failingKeys{c.Keys, corrupt}
		c.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	})
	res, body := h.authed(t, "GET", "/v1/store/orders")
	e := wantError(t, res, body, 500, gen.ErrorCodeInternalError)
	if e.Message != "internal error" || res.Header.Get("Retry-After") != "" || res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("message %q, Retry-After %q, Cache-Control %q", e.Message, res.Header.Get("Retry-After"), res.Header.Get("Cache-Control"))
	}
	// The caller could not be named by its key: it is limited by address, like an unknown key.
	if got := parseRateHeaders(t, res); got.limit != 60 || got.remaining != 59 {
		t.Fatalf("rate-limit headers %+v; want the address's first request of the free plan", got)
	}
	var logged bool
	for _, l := range logs.Records(t) {
		if l["level"] == "ERROR" && l["status"] == float64(500) {
			msg, _ := l["error"].(string)
			if !strings.Contains(msg, "osk_s3RBqd") || !strings.Contains(msg, "corrupt record") {
				t.Fatalf("error line %v does not name the record", l)
			}
			logged = true
		}
	}
	if !logged {
		t.Fatal("no error line for the corrupt record")
	}
	// The public document needs no key, so a bad record does not stand in its way.
	if res, _ := h.authed(t, "GET", "/v1/openapi.yaml"); res.StatusCode != 200 {
		t.Fatalf("the public document got %d", res.StatusCode)
	}
}

// TestKeyStoreUnavailable: a key that cannot be looked up is a 503 with Retry-After, and the
// limiter is not asked: the address keeps its quota. The rate-limit headers describe the only
// plan known (that of callers without a key) and claim nothing spent: the minute window with
// its whole limit, ending with the minute.
func TestKeyStoreUnavailable(t *testing.T) {
	logs := &apitest.Log{}
	h := newHarness(t, func(c *api.Config) {
		c.Keys = failingKeys{c.Keys, errors.Join(order.ErrUnavailable, errors.New("dial tcp 10.1.2.3:6379: i/o timeout"))}
		c.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	// While the store is out every request is a 503: its cause is logged at debug level, not
	// as an error line per request (the outage warnings say it once a minute).
	defer func() {
		var debug int
		for _, l := range logs.Records(t) {
			if l["msg"] == "request failed" {
				if l["level"] != "DEBUG" {
					t.Errorf("a 503 logged at %v: %v", l["level"], l)
				}
				debug++
			}
		}
		if debug == 0 {
			t.Error("the cause of a 503 is not logged even at debug level")
		}
	}()
	h.clock.Set(testStart.Add(17 * time.Second))
	for _, path := range []string{"/v1/store/orders", "/v1/nowhere"} {
		res, body := h.authed(t, "GET", path)
		e := wantError(t, res, body, 503, gen.ErrorCodeServiceUnavailable)
		if strings.Contains(e.Message, "10.1.2.3") || strings.Contains(e.Message, "key") {
			t.Fatalf("%s: message %q", path, e.Message)
		}
		got := parseRateHeaders(t, res)
		want := rateHeaders{limit: 60, remaining: 60, reset: testStart.Add(time.Minute).Unix(), ietfName: "minute", ietfR: 60, ietfT: 43,
			policy: `"minute";q=60;w=60, "day";q=1000;w=86400`, retryAfter: "5"}
		if got != want {
			t.Fatalf("%s: headers %+v, want %+v", path, got, want)
		}
	}
	// The document is neither limited nor authenticated: the key store does not stand in
	// its way.
	if res, _ := h.authed(t, "GET", "/v1/openapi.yaml"); res.StatusCode != 200 {
		t.Fatalf("the document with a key: %d", res.StatusCode)
	}
	res, _ := h.do(t, "GET", "/v1/store/orders")
	if res.StatusCode != 401 || parseRateHeaders(t, res).remaining != 59 {
		t.Fatalf("without a key: %d, %+v; want the address's first counted request", res.StatusCode, parseRateHeaders(t, res))
	}
}

// unavailableLimiter is a Limiter whose storage cannot be reached.
type unavailableLimiter struct{}

func (unavailableLimiter) Allow(context.Context, string, order.Limits) (ratelimit.Decision, error) {
	return ratelimit.Decision{}, fmt.Errorf("limiter: %w", order.ErrUnavailable)
}

func (l unavailableLimiter) Peek(ctx context.Context, caller string, limits order.Limits) (ratelimit.Decision, error) {
	return l.Allow(ctx, caller, limits)
}

// TestLimiterUnavailable: no decision can be made, so the answer is a 503 with Retry-After
// whose rate-limit headers name the key's own plan and claim nothing spent: no Remaining: 0
// for a caller who may have requests left.
func TestLimiterUnavailable(t *testing.T) {
	h := newHarness(t, func(c *api.Config) { c.Limiter = unavailableLimiter{} })
	key := h.addKey(t, "pro", order.Pro, order.Limits{})
	res, body := h.do(t, "DELETE", "/v1/store/orders/1", "Authorization", "Bearer "+key)
	wantError(t, res, body, 503, gen.ErrorCodeServiceUnavailable)
	got := parseRateHeaders(t, res)
	minuteEnd, _ := ratelimit.WindowEnds(h.clock.Now())
	want := rateHeaders{limit: 300, remaining: 300, reset: minuteEnd.Unix(), ietfName: "minute", ietfR: 300,
		ietfT: int64(minuteEnd.Sub(h.clock.Now()).Seconds()), policy: `"minute";q=300;w=60, "day";q=10000;w=86400`, retryAfter: "5"}
	if got != want {
		t.Fatalf("headers %+v, want %+v", got, want)
	}
}
