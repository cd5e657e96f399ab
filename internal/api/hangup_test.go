package api_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/metrics"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
)

// waitingLimiter is a limiter whose store answers only once the request's context ends, and
// then as the Redis stores do (redisstore's classify): with the context's own error.
type waitingLimiter struct{ entered chan struct{} }

func (l waitingLimiter) Peek(ctx context.Context, caller string, limits order.Limits) (ratelimit.Decision, error) {
	return l.Allow(ctx, caller, limits)
}

func (l waitingLimiter) Allow(ctx context.Context, _ string, _ order.Limits) (ratelimit.Decision, error) {
	close(l.entered)
	<-ctx.Done()
	return ratelimit.Decision{}, ctx.Err()
}

// waitingKeys is the same for the key store.
type waitingKeys struct {
	order.KeyStore
	entered chan struct{}
}

func (k waitingKeys) Lookup(ctx context.Context, _ order.Hash) (order.Key, error) {
	close(k.entered)
	<-ctx.Done()
	return order.Key{}, ctx.Err()
}

// TestHungUpRequestIsNoOutage: a request whose client hangs up while the key store or the
// limiter works is answered with a valid Error of the contract (a 503 with Retry-After and
// the rate-limit headers), but it is not an outage: no error line, no store error, no
// "unavailable" decision in the metrics.
func TestHungUpRequestIsNoOutage(t *testing.T) {
	checker, err := apitest.New("/v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"key lookup", "limiter"} {
		t.Run(step, func(t *testing.T) {
			logs := &apitest.Log{}
			m := metrics.New()
			entered := make(chan struct{})
			h := newHarness(t, func(c *api.Config) {
				c.Logger = slog.New(slog.NewJSONHandler(logs, nil))
				c.Observer, c.Metrics = m, m.Handler()
				if step == "limiter" {
					c.Limiter = waitingLimiter{entered}
				} else {
					c.Keys = waitingKeys{c.Keys, entered}
				}
			})
			handler := h.srv.Config.Handler

			ctx, hangUp := context.WithCancel(context.Background())
			req := httptest.NewRequestWithContext(ctx, "GET", "/v1/store/orders", nil)
			req.Header.Set("Authorization", "Bearer "+h.key)
			rec := httptest.NewRecorder()
			served := make(chan struct{})
			go func() { defer close(served); handler.ServeHTTP(rec, req) }()
			<-entered
			hangUp()
			<-served

			res := rec.Result()
			body, _ := io.ReadAll(res.Body)
			if err := checker.Check(req, res, body); err != nil {
				t.Fatalf("answer to a hung-up request: %v\n%d %s", err, res.StatusCode, body)
			}
			if res.StatusCode != http.StatusServiceUnavailable || !bytes.Contains(body, []byte(gen.ErrorCodeServiceUnavailable)) ||
				res.Header.Get("Retry-After") == "" {
				t.Fatalf("answer %d %s, Retry-After %q", res.StatusCode, body, res.Header.Get("Retry-After"))
			}
			for _, name := range apitest.RateLimitHeaders {
				if res.Header.Get(name) == "" {
					t.Errorf("no %s", name)
				}
			}
			if res.Header.Get("X-RateLimit-Remaining") == "0" {
				t.Error("the answer claims the caller's quota spent")
			}

			for _, l := range logs.Records(t) {
				if l["level"] == "ERROR" {
					t.Errorf("error line for a hung-up request: %v", l)
				}
			}
			mres, _ := http.Get(h.srv.URL + "/metrics")
			text, _ := io.ReadAll(mres.Body)
			mres.Body.Close()
			for _, bad := range []string{`orderd_store_errors_total\{[^}]*\} [1-9]`, `orderd_ratelimit_decisions_total\{outcome="unavailable"\}`} {
				if regexp.MustCompile(bad).Match(text) { // the store's errors are exported at 0 from the start
					t.Errorf("metrics count a hung-up request: %s", bad)
				}
			}
			if !strings.Contains(string(text), `orderd_http_requests_total{operation="listOrders",status="503"} 1`) {
				t.Error("the hung-up request is not counted among the requests")
			}
		})
	}
}

// TestShuttingDownIsNoStoreError: /readyz answers 503 once shutdown began, on every probe of
// a rolling restart; the store did not fail, so orderd_store_errors_total does not count it.
func TestShuttingDownIsNoStoreError(t *testing.T) {
	m := metrics.New()
	draining := make(chan struct{})
	close(draining)
	h := newHarness(t, func(c *api.Config) { c.Observer, c.Metrics, c.Draining = m, m.Handler(), draining })
	res, body := h.do(t, "GET", "/readyz")
	if res.StatusCode != http.StatusServiceUnavailable || !bytes.Contains(body, []byte("shutting down")) {
		t.Fatalf("/readyz while draining: %d %s", res.StatusCode, body)
	}
	mres, err := http.Get(h.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(mres.Body)
	mres.Body.Close()
	if regexp.MustCompile(`orderd_store_errors_total\{[^}]*\} [1-9]`).Match(text) { // exported at 0 from the start
		t.Error("a readiness probe while shutting down counted as a store error")
	}
	if !strings.Contains(string(text), `orderd_http_requests_total{operation="/readyz",status="503"} 1`) {
		t.Error("the probe is not counted among the requests")
	}
}

// waitingOrders is the same for the order store's cancel.
type waitingOrders struct {
	order.Store
	entered chan struct{}
}

func (o waitingOrders) Cancel(ctx context.Context, _ int64) (order.Order, bool, error) {
	close(o.entered)
	<-ctx.Done()
	return order.Order{}, false, ctx.Err()
}

// TestHungUpCancelIsNoFailedCancel: a cancel whose client hangs up while the store works is
// not counted as a cancel that failed (orderd_cancellations_total{outcome="error"}).
func TestHungUpCancelIsNoFailedCancel(t *testing.T) {
	m := metrics.New()
	entered := make(chan struct{})
	h := newHarness(t, func(c *api.Config) {
		c.Observer, c.Metrics = m, m.Handler()
		c.Orders = waitingOrders{c.Orders, entered}
	})
	ctx, hangUp := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, "DELETE", "/v1/store/orders/1", nil)
	req.Header.Set("Authorization", "Bearer "+h.key)
	served := make(chan struct{})
	go func() { defer close(served); h.srv.Config.Handler.ServeHTTP(httptest.NewRecorder(), req) }()
	<-entered
	hangUp()
	<-served
	mres, err := http.Get(h.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(mres.Body)
	mres.Body.Close()
	if strings.Contains(string(text), `orderd_cancellations_total{outcome="error"}`) {
		t.Error("a cancel whose client hung up counted as a failed cancel")
	}
}
