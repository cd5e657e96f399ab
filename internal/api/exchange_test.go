package api

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
)

// wrappedContext is a step's own context, as echo's docs extend one.
type wrappedContext struct{ echo.Context }

// noKeys knows no key.
type noKeys struct{ order.KeyStore }

func (noKeys) Lookup(context.Context, order.Hash) (order.Key, error) {
	return order.Key{}, order.ErrKeyNotFound
}

// TestAStepThatReplacesTheContext: a step between observe and admit that passes on an
// echo.Context of its own neither fails the request (a panic, so a 500) nor loses admit's
// decision: the 401 of a request without a key carries its rate-limit headers, compressed
// or not.
func TestAStepThatReplacesTheContext(t *testing.T) {
	ops, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	cfg := &Config{Keys: noKeys{}, Limiter: ratelimit.NewMemory(time.Now, ratelimit.DefaultBanPolicy), Now: time.Now,
		Observer: noObserver{}, IPv6Prefix: ratelimit.DefaultIPv6Prefix, MaxStreamsPerKey: 1}
	replace := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error { return next(wrappedContext{c}) }
	}
	for _, gzip := range []bool{false, true} {
		e := echo.New()
		e.HTTPErrorHandler = errorHandler(log)
		e.GET(BasePath+"/store/orders", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
		s := &Server{Config: cfg, ops: ops}
		e.Use(s.observe, recoverPanics(log), replace, s.admit, conform)
		req := httptest.NewRequest("GET", BasePath+"/store/orders", nil)
		if gzip {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized || rec.Header().Get("X-Ratelimit-Limit") == "" {
			t.Fatalf("gzip %v: status %d, headers %v; want 401 with the rate-limit headers: %s", gzip, rec.Code, rec.Header(), rec.Body)
		}
		if err := apitest.Load(t).Check(req, rec.Result(), rec.Body.Bytes()); err != nil {
			t.Errorf("gzip %v: the answer breaks the contract: %v", gzip, err)
		}
	}
}
