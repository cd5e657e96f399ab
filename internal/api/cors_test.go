package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/order"
)

const shop = "https://shop.example"

func newCORSHarness(t *testing.T) *harness {
	return newHarness(t, func(c *api.Config) { c.CORSAllowOrigins = []string{shop, "http://localhost:3000"} })
}

// preflightOf sends a browser's preflight for a GET with a key.
func (h *harness) preflightOf(t *testing.T, path, origin string) (*http.Response, []byte) {
	t.Helper()
	return h.do(t, "OPTIONS", path, "Origin", origin, "Access-Control-Request-Method", "GET",
		"Access-Control-Request-Headers", "authorization,if-none-match")
}

func varies(res *http.Response) bool {
	for _, v := range res.Header.Values("Vary") {
		for f := range strings.SplitSeq(v, ",") {
			if strings.TrimSpace(f) == "Origin" {
				return true
			}
		}
	}
	return false
}

// TestPreflight: a preflight from an allowed origin to a known path is answered 204 without a
// key and without spending quota; from another origin, to an unknown path, or a plain OPTIONS,
// the answer is today's: admitted and counted, so 401 without a key, else 404 or 405.
func TestPreflight(t *testing.T) {
	h := newCORSHarness(t)
	res, _ := h.authed(t, "GET", "/v1/store/orders")
	before := parseRateHeaders(t, res).remaining

	for _, path := range []string{"/v1/store/orders", "/v2/store/orders/1", "/v2/store/events"} {
		res, _ = h.preflightOf(t, path, shop)
		if res.StatusCode != 204 || res.Header.Get("Access-Control-Allow-Origin") != shop || !varies(res) ||
			res.Header.Get("Access-Control-Max-Age") != "600" || res.Header.Get("Access-Control-Allow-Credentials") != "" {
			t.Fatalf("preflight of %s: %d %v", path, res.StatusCode, res.Header)
		}
		if got := res.Header.Get("Access-Control-Allow-Headers"); got != "Authorization, If-None-Match, Last-Event-ID, X-Request-Id, traceparent, tracestate" {
			t.Errorf("preflight of %s: Access-Control-Allow-Headers %q", path, got)
		}
		if res.Header.Get("X-RateLimit-Remaining") != "" {
			t.Errorf("preflight of %s: rate-limit headers", path)
		}
	}
	if got := res.Header.Get("Access-Control-Allow-Methods"); got != "GET, HEAD" {
		t.Errorf("events: Access-Control-Allow-Methods %q, want what the path serves", got)
	}
	res, _ = h.preflightOf(t, "/v2/store/orders/1", shop)
	if got := res.Header.Get("Access-Control-Allow-Methods"); got != "DELETE, GET, HEAD" {
		t.Errorf("an order: Access-Control-Allow-Methods %q", got)
	}

	res, _ = h.authed(t, "GET", "/v1/store/orders")
	if after := parseRateHeaders(t, res).remaining; after != before-1 {
		t.Fatalf("Remaining %d, then %d after 4 preflights and a GET: preflights spent quota", before, after)
	}

	// A page that traces sends its W3C trace context, which the service continues: a
	// preflight that does not allow every header asked for fails the request in the browser.
	t.Run("TraceContext", func(t *testing.T) {
		res, _ := h.do(t, "OPTIONS", "/v2/store/events", "Origin", shop, "Access-Control-Request-Method", "GET",
			"Access-Control-Request-Headers", "authorization,last-event-id,traceparent,tracestate")
		allowed := strings.Split(strings.ToLower(res.Header.Get("Access-Control-Allow-Headers")), ", ")
		for _, name := range []string{"authorization", "last-event-id", "traceparent", "tracestate"} {
			if res.StatusCode != 204 || !slices.Contains(allowed, name) {
				t.Errorf("%d: %s not allowed: %q", res.StatusCode, name, allowed)
			}
		}
	})
	t.Run("NotAllowed", func(t *testing.T) {
		for _, origin := range []string{"https://evil.example", "https://shop.example:8443", "null"} {
			res, body := h.preflightOf(t, "/v1/store/orders", origin)
			wantError(t, res, body, 401, gen.ErrorCodeUnauthorized)
			if res.Header.Get("Access-Control-Allow-Origin") != "" || !varies(res) {
				t.Errorf("%s: %v", origin, res.Header)
			}
		}
	})
	t.Run("UnknownPath", func(t *testing.T) {
		res, body := h.preflightOf(t, "/v1/store/nothing", shop)
		wantError(t, res, body, 401, gen.ErrorCodeUnauthorized)
		res, body = h.authed(t, "OPTIONS", "/v1/store/orders/1/items", "Origin", shop, // no template takes it
			"Access-Control-Request-Method", "GET")
		wantError(t, res, body, 404, gen.ErrorCodeNotFound)
	})
	t.Run("PlainOptions", func(t *testing.T) {
		res, body := h.authed(t, "OPTIONS", "/v1/store/orders", "Origin", shop)
		wantError(t, res, body, 405, gen.ErrorCodeMethodNotAllowed)
		if res.Header.Get("Allow") != "GET, HEAD" || res.Header.Get("Access-Control-Allow-Methods") != "" {
			t.Errorf("%v", res.Header)
		}
		parseRateHeaders(t, res) // counted, as today
	})
	t.Run("PastTheHeaderLimit", func(t *testing.T) {
		res, body := h.do(t, "OPTIONS", "/v1/store/orders", "Origin", shop, "Access-Control-Request-Method", "GET",
			"X-Pad", strings.Repeat("x", api.MaxHeaderBytes))
		wantError(t, res, body, 401, gen.ErrorCodeUnauthorized) // admitted as today, then refused
	})
	t.Run("OutsideTheBases", func(t *testing.T) {
		res, _ := h.preflightOf(t, "/healthz", shop)
		if res.StatusCode == 204 || res.Header.Get("Access-Control-Allow-Origin") != "" || varies(res) {
			t.Errorf("/healthz: %d %v", res.StatusCode, res.Header)
		}
	})
}

// TestCORSExposesTheHeaders: every answer to an allowed origin, errors included, names it
// and the headers its script may read; other origins get Vary alone.
func TestCORSExposesTheHeaders(t *testing.T) {
	h := newCORSHarness(t)
	res, _ := h.authed(t, "GET", "/v1/store/orders", "Origin", shop)
	etag := res.Header.Get("ETag")
	answers := map[int]*http.Response{200: res}
	answers[304], _ = h.authed(t, "GET", "/v1/store/orders", "Origin", shop, "If-None-Match", etag)
	answers[401], _ = h.do(t, "GET", "/v2/store/orders", "Origin", shop, "Authorization", "Bearer nope")
	key := h.addKey(t, "small", order.Enterprise, order.Limits{PerMinute: 1, PerDay: 10})
	h.do(t, "GET", "/v1/store/orders", "Authorization", "Bearer "+key)
	answers[429], _ = h.do(t, "GET", "/v1/store/orders", "Origin", shop, "Authorization", "Bearer "+key)
	// A GET needs no preflight, and v1 only cancels an order: the 405's message says to see Allow.
	answers[405], _ = h.authed(t, "GET", "/v1/store/orders/1", "Origin", shop)

	for status, res := range answers {
		if res.StatusCode != status {
			t.Fatalf("got %d, want %d", res.StatusCode, status)
		}
		exposed := strings.Split(res.Header.Get("Access-Control-Expose-Headers"), ", ")
		for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit",
			"RateLimit-Policy", "Retry-After", "ETag", "Link", "X-Request-Id", "Orders-Event-Id", "Deprecation",
			"Sunset", "WWW-Authenticate", "Allow"} {
			if !slices.Contains(exposed, name) {
				t.Errorf("%d: %s not exposed: %q", status, name, exposed)
			}
		}
		if res.Header.Get("Access-Control-Allow-Origin") != shop || !varies(res) || res.Header.Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("%d: %v", status, res.Header)
		}
	}

	res, _ = h.authed(t, "GET", "/v1/store/orders", "Origin", "https://evil.example")
	if res.Header.Get("Access-Control-Allow-Origin") != "" || res.Header.Get("Access-Control-Expose-Headers") != "" || !varies(res) {
		t.Errorf("another origin: %v", res.Header)
	}
	res, _ = h.do(t, "GET", "/healthz", "Origin", shop)
	if res.Header.Get("Access-Control-Allow-Origin") != "" || varies(res) {
		t.Errorf("/healthz is no API for browsers: %v", res.Header)
	}
}

// TestCORSOffByDefault: without origins, no CORS header at all, Vary included.
func TestCORSOffByDefault(t *testing.T) {
	h := newHarness(t)
	res, body := h.preflightOf(t, "/v1/store/orders", shop)
	wantError(t, res, body, 401, gen.ErrorCodeUnauthorized)
	res, _ = h.authed(t, "GET", "/v1/store/orders", "Origin", shop)
	for name := range res.Header {
		if strings.HasPrefix(name, "Access-Control-") {
			t.Errorf("%s: %q", name, res.Header.Get(name))
		}
	}
	if varies(res) {
		t.Errorf("Vary: Origin with CORS off")
	}
}

func TestCheckOrigin(t *testing.T) {
	for _, ok := range []string{"https://shop.example", "http://localhost:3000", "http://127.0.0.1:8080", "https://[::1]:8443"} {
		if err := api.CheckOrigin(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"*", "null", "shop.example", "https://shop.example/", "https://shop.example/app",
		"https://Shop.example", "ftp://shop.example", "https://shop.example:443", "http://a:80", "https://u@shop.example",
		"https://shop.example?x", "https://",
		// Forms a browser never sends, so that they would never match: it writes the port
		// and an IP address in their shortest form.
		"https://shop.example:", "http://shop.example:0080", "https://shop.example:00443", "http://shop.example:70000",
		"http://127.000.000.001", "http://127.1", "http://[::0001]:8080", "http://[0:0:0:0:0:0:0:1]"} {
		if err := api.CheckOrigin(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if err := api.CheckOrigin("*"); err == nil || !strings.Contains(err.Error(), "API keys") {
		t.Errorf("*: %v, want the reason", err)
	}
}
