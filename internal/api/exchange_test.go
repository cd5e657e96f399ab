package api

import (
	"bytes"
	"context"
	"encoding/json"
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

// TestAStepThatReplacesTheContext: a middleware between observe and admit that passes on a
// context of its own neither fails the request (a panic, so a 500) nor loses admit's
// decision: the 401 of a request without a key carries its rate-limit headers, compressed
// or not, and with no observe at all the decision is still made.
func TestAStepThatReplacesTheContext(t *testing.T) {
	ct, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	limiter := ratelimit.NewMemory(time.Now, ratelimit.DefaultBanPolicy)
	replace := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error { return next(wrappedContext{c}) }
	}
	admitting := admit(noKeys{}, limiter, newStreams(Config{MaxStreamsPerKey: 1, Observer: noObserver{}}), ct, time.Now, noObserver{}, ratelimit.DefaultIPv6Prefix)
	for _, tc := range []struct {
		name    string
		chain   []echo.MiddlewareFunc
		gzip    bool
		headers bool
	}{
		{"replaced", []echo.MiddlewareFunc{observe(log, nil, noObserver{}, ct, Sunset{}, nil, false, time.Now), compress, recoverPanics(log), replace, admitting}, false, true},
		{"replaced, compressed", []echo.MiddlewareFunc{observe(log, nil, noObserver{}, ct, Sunset{}, nil, false, time.Now), compress, recoverPanics(log), replace, admitting}, true, true},
		{"no observe", []echo.MiddlewareFunc{recoverPanics(log), replace, admitting}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := echo.New()
			e.HTTPErrorHandler = errorHandler(log)
			e.GET(BasePath+"/store/orders", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
			e.Use(tc.chain...)
			req := httptest.NewRequest("GET", BasePath+"/store/orders", nil)
			if tc.gzip {
				req.Header.Set("Accept-Encoding", "gzip")
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			if rec.Code != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401: %s", rec.Code, rec.Body)
			}
			if got := rec.Header().Get("X-Ratelimit-Limit") != ""; got != tc.headers {
				t.Fatalf("X-RateLimit-Limit sent: %v, want %v (headers %v)", got, tc.headers, rec.Header())
			}
			if tc.headers { // the served chain's answer, but for the step added
				if err := apitest.Load(t).Check(req, rec.Result(), rec.Body.Bytes()); err != nil {
					t.Errorf("the answer breaks the contract: %v", err)
				}
			}
		})
	}
}

// TestAccessFieldsAreSlogs: appendField writes a field as slog's JSON handler does, value for
// value, for the names a key may have, which are the only values a client chooses freely.
func TestAccessFieldsAreSlogs(t *testing.T) {
	for _, name := range []string{"bench", `quote " and \ back`, "tab\tnew\nline", "émoji 🐈", "bad \xff byte", "<html> & co", ""} {
		var want bytes.Buffer
		slog.New(slog.NewJSONHandler(&want, nil)).Info("request", "key_name", name)
		var slogs, ours map[string]any
		if err := json.Unmarshal(want.Bytes(), &slogs); err != nil {
			t.Fatal(err)
		}
		line := append(appendField([]byte(`{"msg":"request"`), "key_name", name), '}')
		if err := json.Unmarshal(line, &ours); err != nil {
			t.Fatalf("%q: %s is no JSON: %v", name, line, err)
		}
		if ours["key_name"] != slogs["key_name"] {
			t.Errorf("%q: key_name %q, slog's %q", name, ours["key_name"], slogs["key_name"])
		}
	}
}
