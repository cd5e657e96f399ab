package apitest

import (
	"net/http"
	"testing"

	"github.com/petstore/orderd"
)

// headers are what every answer under /v1 carries, with extra name/value pairs added, and
// the names in drop left out.
func headers(drop []string, extra ...string) http.Header {
	h := http.Header{
		"Content-Type":          {"application/json"},
		"X-Request-Id":          {"3f9c2a1b7e4d-1k"},
		"X-Ratelimit-Limit":     {"60"},
		"X-Ratelimit-Remaining": {"59"},
		"X-Ratelimit-Reset":     {"1767225660"},
		"Ratelimit":             {`"minute";r=59;t=17`},
		"Ratelimit-Policy":      {`"minute";q=60;w=60, "day";q=1000;w=86400`},
	}
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	for _, name := range drop {
		h.Del(name)
	}
	return h
}

var sunset = []string{"Deprecation", "@1767225600", "Sunset", "Wed, 01 Jul 2026 00:00:00 GMT", "Link", `<https://docs.petstore.example/orders/migrate>; rel="sunset"`}

type answer struct {
	name, method, path string
	status             int
	header             http.Header
	body               string
}

// TestCheckAcceptsTheContract is the control for TestCheckCatchesDrift: answers as the
// document declares them pass, so the drift cases fail for what each changes.
func TestCheckAcceptsTheContract(t *testing.T) {
	c, err := New("/v1")
	if err != nil {
		t.Fatal(err)
	}
	order := `[{"id":9223372036854775807,"petId":1,"quantity":1,"shipDate":"2026-11-20T08:30:00Z","complete":false,"status":"pending"}]`
	for _, tc := range []answer{
		{"list", "GET", "/v1/store/orders", 200, headers(nil, "Etag", `W/"x1"`, "Orders-Event-Id", "7"), order},
		{"cancel", "DELETE", "/v1/store/orders/1", 204, headers([]string{"Content-Type"}), ``},
		{"pet", "GET", "/v1/pets/7", 200, headers(nil, sunset...), `{"id":7,"name":"doggie","status":"available"}`},
		{"pet 401", "GET", "/v1/pets/7", 401, headers(nil, append([]string{"Www-Authenticate", `Bearer realm="orders"`}, sunset...)...), `{"code":"unauthorized","message":"x","status":401}`},
		{"the document", "GET", "/v1/openapi.yaml", 200, headers(RateLimitHeaders, "Content-Type", "application/yaml"), string(orderd.OpenAPI)},
		{"HEAD of the list", "HEAD", "/v1/store/orders", 200, headers(nil, "Etag", `W/"x1"`, "Orders-Event-Id", "7"), ``},
		{"a 405 of an operation's path", "PUT", "/v1/store/orders", 405, headers(nil, "Allow", "GET"), `{"code":"method_not_allowed","message":"x","status":405}`},
		{"an unknown route", "GET", "/v1/nowhere", 404, headers(nil), `{"code":"not_found","message":"x","status":404}`},
		{"a redirect outside the base path", "GET", "/", 302, headers(RateLimitHeaders, "Location", "/docs"), ``},
		{"health outside the base path", "GET", "/healthz", 200, headers(RateLimitHeaders), `{"status":"ok"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, "http://127.0.0.1:1"+tc.path, nil)
			res := &http.Response{StatusCode: tc.status, Header: tc.header}
			if err := c.Check(req, res, []byte(tc.body)); err != nil {
				t.Fatalf("Check refused an answer the contract declares: %v", err)
			}
		})
	}
}

// TestCheckCatchesDrift proves the checker can fail: each answer here breaks openapi.yaml.
func TestCheckCatchesDrift(t *testing.T) {
	c, err := New("/v1")
	if err != nil {
		t.Fatal(err)
	}
	list := headers(nil, "Etag", `W/"x"`, "Orders-Event-Id", "7")
	for _, tc := range []answer{
		{"undeclared status", "DELETE", "/v1/store/orders/1", 418, headers(nil), `{"code":"internal_error","message":"x","status":418}`},
		{"a code under another status", "DELETE", "/v1/store/orders/1", 409, headers(nil), `{"code":"order_not_found","message":"x","status":409}`},
		{"id as a string", "GET", "/v1/store/orders", 200, list, `[{"id":"1","petId":1,"quantity":1,"shipDate":"2026-11-20T08:30:00Z","complete":false,"status":"pending"}]`},
		{"unknown status value", "GET", "/v1/store/orders", 200, list, `[{"id":1,"petId":1,"quantity":1,"shipDate":"2026-11-20T08:30:00Z","complete":false,"status":"lost"}]`},
		{"an order without petId", "GET", "/v1/store/orders", 200, list, `[{"id":1,"quantity":1,"shipDate":"2026-11-20T08:30:00Z","complete":false,"status":"pending"}]`},
		{"a pet without name", "GET", "/v1/pets/7", 200, headers(nil, sunset...), `{"id":7,"status":"available"}`},
		{"a pet error without Sunset", "GET", "/v1/pets/7", 500, headers([]string{"Sunset"}, sunset...), `{"code":"internal_error","message":"x","status":500}`},
		{"list without ETag", "GET", "/v1/store/orders", 200, headers(nil), `[]`},
		{"no X-Request-Id", "GET", "/v1/store/orders", 200, headers([]string{"X-Request-Id"}, "Etag", `W/"x"`, "Orders-Event-Id", "7"), `[]`},
		{"no X-Request-Id outside /v1", "GET", "/healthz", 200, headers([]string{"X-Request-Id"}), `{}`},
		{"the document as JSON", "GET", "/v1/openapi.yaml", 200, headers(RateLimitHeaders, "Content-Type", "application/yaml"), `{"openapi":"3.0.3"}`},
		{"the unlimited document with rate-limit headers", "GET", "/v1/openapi.yaml", 200, headers(nil, "Content-Type", "application/yaml"), string(orderd.OpenAPI)},
		{"HEAD of the list without ETag", "HEAD", "/v1/store/orders", 200, headers(nil), ``},
		{"error without code", "DELETE", "/v1/store/orders/1", 404, headers(nil), `{"message":"x","status":404}`},
		{"unknown error code", "DELETE", "/v1/store/orders/1", 404, headers(nil), `{"code":"nope","message":"x","status":404}`},
		{"error status differs", "DELETE", "/v1/store/orders/1", 404, headers(nil), `{"code":"order_not_found","message":"x","status":400}`},
		{"plain-text error", "GET", "/v1/nowhere", 404, headers(nil, "Content-Type", "text/plain"), `not found`},
		{"unrouted request answered 200", "GET", "/v1/nowhere", 200, headers(nil), `{}`},
		{"plain-text error outside the base path", "GET", "/healthz", 503, headers(RateLimitHeaders, "Content-Type", "text/plain"), `down`},
		{"no request id outside the base path", "GET", "/", 302, headers([]string{"X-Request-Id"}), ``},
		{"429 without Retry-After", "DELETE", "/v1/store/orders/1", 429, headers(nil), `{"code":"rate_limit_exceeded","message":"x","status":429}`},
		{"no rate-limit headers on a 404 route", "GET", "/v1/nowhere", 404, headers([]string{"X-Ratelimit-Limit"}), `{"code":"not_found","message":"x","status":404}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, "http://127.0.0.1:1"+tc.path, nil)
			res := &http.Response{StatusCode: tc.status, Header: tc.header}
			if err := c.Check(req, res, []byte(tc.body)); err == nil {
				t.Fatal("Check accepted an answer that breaks the contract")
			}
		})
	}
}

// TestCheckPreflight: a browser's preflight is answered 204 outside every operation, for its
// origin and without the rate-limit headers; each case after the first breaks one of those.
func TestCheckPreflight(t *testing.T) {
	c, err := New("/v1")
	if err != nil {
		t.Fatal(err)
	}
	good := []string{"Access-Control-Allow-Origin", "https://shop.example", "Access-Control-Allow-Methods", "GET, HEAD", "Vary", "Origin"}
	for _, tc := range []struct {
		name      string
		path      string
		preflight bool // Origin and Access-Control-Request-Method sent
		header    http.Header
		ok        bool
	}{
		{"a preflight", "/v1/store/orders", true, headers(RateLimitHeaders, good...), true},
		{"with rate-limit headers", "/v1/store/orders", true, headers(nil, good...), false},
		{"another origin", "/v1/store/orders", true, headers(RateLimitHeaders, append(good, "Access-Control-Allow-Origin", "https://evil.example")...), false},
		{"no methods", "/v1/store/orders", true, headers(append([]string{"Access-Control-Allow-Methods"}, RateLimitHeaders...), good...), false},
		{"no Vary", "/v1/store/orders", true, headers(append([]string{"Vary"}, RateLimitHeaders...), good...), false},
		{"credentials", "/v1/store/orders", true, headers(RateLimitHeaders, append(good, "Access-Control-Allow-Credentials", "true")...), false},
		{"an unknown path", "/v1/nowhere", true, headers(RateLimitHeaders, good...), false},
		{"a plain OPTIONS", "/v1/store/orders", false, headers(RateLimitHeaders, good...), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("OPTIONS", "http://127.0.0.1:1"+tc.path, nil)
			if tc.preflight {
				req.Header.Set("Origin", "https://shop.example")
				req.Header.Set("Access-Control-Request-Method", "GET")
			}
			tc.header.Del("Content-Type")
			err := c.Check(req, &http.Response{StatusCode: 204, Header: tc.header}, nil)
			if (err == nil) != tc.ok {
				t.Fatalf("Check: %v, want ok %v", err, tc.ok)
			}
		})
	}
}
