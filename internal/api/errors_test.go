package api_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/order"
)

// TestErrorTable walks the service's error table (each error code with its status, as the
// description of openapi.yaml lists them); every answer is an Error object that the contract
// allows (checked by h.do).
func TestErrorTable(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name, method, path string
		status             int
		code               gen.ErrorCode
		inMessage          string
	}{
		{"orderId not an integer", "DELETE", "/v1/store/orders/abc", 400, gen.ErrorCodeInvalidRequest, "orderId"},
		{"orderId negative", "DELETE", "/v1/store/orders/-1", 400, gen.ErrorCodeInvalidRequest, "orderId"},
		{"orderId past int64", "DELETE", "/v1/store/orders/9223372036854775808", 400, gen.ErrorCodeInvalidRequest, "orderId"},
		{"orderId a fraction", "DELETE", "/v1/store/orders/1.5", 400, gen.ErrorCodeInvalidRequest, "orderId"},
		{"orderId empty", "DELETE", "/v1/store/orders/", 404, gen.ErrorCodeNotFound, ""},
		{"trailing slash after the id", "DELETE", "/v1/store/orders/1/", 404, gen.ErrorCodeNotFound, ""},
		{"a path below an order", "DELETE", "/v1/store/orders/1/items", 404, gen.ErrorCodeNotFound, ""},
		{"an empty pet id and a slash", "GET", "/v1/pets//", 404, gen.ErrorCodeNotFound, ""},
		{"petId not an integer", "GET", "/v1/pets/x", 400, gen.ErrorCodeInvalidRequest, "petId"},
		{"order not found", "DELETE", "/v1/store/orders/4", 404, gen.ErrorCodeOrderNotFound, "4"},
		{"pet not found", "GET", "/v1/pets/8", 404, gen.ErrorCodePetNotFound, "8"},
		{"no route under /v1", "GET", "/v1/store/nothing", 404, gen.ErrorCodeNotFound, ""},
		{"no route at all", "GET", "/nothing", 404, gen.ErrorCodeNotFound, ""},
		{"GET below an order", "GET", "/v1/store/orders/2/items", 404, gen.ErrorCodeNotFound, ""},
		{"GET with an empty segment before the id", "GET", "/v1/store/orders//2", 404, gen.ErrorCodeNotFound, ""},
		{"DELETE with an empty segment before the id", "DELETE", "/v1/store/orders//2", 404, gen.ErrorCodeNotFound, ""},
		{"PUT below an order", "PUT", "/v1/store/orders/2/items", 404, gen.ErrorCodeNotFound, ""},
		{"DELETE below a pet", "DELETE", "/v1/pets/7/x", 404, gen.ErrorCodeNotFound, ""},
		{"HEAD below an order", "HEAD", "/v1/store/orders/2/items", 404, "", ""},
		{"no route outside the versions", "GET", "/v3/store/orders", 404, gen.ErrorCodeNotFound, ""},
		{"wrong method on the list", "POST", "/v1/store/orders", 405, gen.ErrorCodeMethodNotAllowed, ""},
		{"wrong method on an order", "GET", "/v1/store/orders/1", 405, gen.ErrorCodeMethodNotAllowed, ""},
		{"OPTIONS is not served", "OPTIONS", "/v1/store/orders", 405, gen.ErrorCodeMethodNotAllowed, ""},
		{"HEAD where GET is not served", "HEAD", "/v1/store/orders/1", 405, "", ""},
		{"shipped order", "DELETE", "/v1/store/orders/2", 409, gen.ErrorCodeOrderAlreadyShipped, "2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := h.authed(t, tc.method, tc.path)
			if tc.method == "HEAD" { // no body to a HEAD; the status and headers still hold
				if res.StatusCode != tc.status {
					t.Fatalf("got %d, want %d", res.StatusCode, tc.status)
				}
				return
			}
			e := wantError(t, res, body, tc.status, tc.code)
			if !strings.Contains(e.Message, tc.inMessage) {
				t.Errorf("message %q does not mention %q", e.Message, tc.inMessage)
			}
			if got := res.Header.Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type %q", got)
			}
		})
	}
}

func TestMethodNotAllowedListsWhatWorks(t *testing.T) {
	h := newHarness(t)
	for path, want := range map[string]string{"/v1/store/orders": "GET, HEAD", "/v1/store/orders/1": "DELETE", "/v1/pets/7": "GET, HEAD"} {
		for _, method := range []string{"PUT", "OPTIONS"} {
			res, _ := h.authed(t, method, path)
			if res.StatusCode != 405 || res.Header.Get("Allow") != want {
				t.Errorf("%s %s: got %d, Allow %q; want 405, Allow %q", method, path, res.StatusCode, res.Header.Get("Allow"), want)
			}
		}
	}
}

func TestIfNoneMatchTooLong(t *testing.T) {
	h := newHarness(t)
	res, body := h.authed(t, "GET", "/v1/store/orders", "If-None-Match", `"`+strings.Repeat("a", 2000)+`"`)
	e := wantError(t, res, body, 400, gen.ErrorCodeInvalidRequest)
	if !strings.Contains(e.Message, "If-None-Match") {
		t.Errorf("message %q does not name the header", e.Message)
	}
}

func TestAuthentication(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name   string
		header []string
		status int
	}{
		{"missing", nil, 401},
		{"other scheme", []string{"Authorization", "Basic " + h.key}, 401},
		{"scheme only", []string{"Authorization", "Bearer"}, 401},
		{"empty token", []string{"Authorization", "Bearer "}, 401},
		{"unknown key", []string{"Authorization", "Bearer osk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}, 401},
		{"key with a space inside", []string{"Authorization", "Bearer " + h.key + " x"}, 401},
		{"two Authorization fields", []string{"Authorization", "Bearer " + h.key, "Authorization", "Bearer " + h.key}, 401},
		{"scheme lower case", []string{"Authorization", "bearer " + h.key}, 200},
		{"scheme upper case", []string{"Authorization", "BEARER " + h.key}, 200},
		{"several spaces", []string{"Authorization", "Bearer   " + h.key}, 200},
		{"valid", []string{"Authorization", "Bearer " + h.key}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := h.do(t, "GET", "/v1/store/orders", tc.header...)
			if tc.status == 200 {
				if res.StatusCode != 200 {
					t.Fatalf("got %d %s", res.StatusCode, body)
				}
				return
			}
			e := wantError(t, res, body, 401, gen.ErrorCodeUnauthorized)
			if got := res.Header.Get("WWW-Authenticate"); got != `Bearer realm="orders"` {
				t.Errorf("WWW-Authenticate %q", got)
			}
			if strings.Contains(e.Message, h.key) {
				t.Errorf("the message repeats the key")
			}
		})
	}
}

// TestAuthenticationComesFirst: without a key, an unknown route, a wrong method or a bad
// parameter is still a 401. Order of work: who calls, then the rate limit, then
// authentication, and only then the route's verdict (404, 405) and its parameters (400).
func TestAuthenticationComesFirst(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct{ method, path string }{
		{"DELETE", "/v1/store/orders/not-a-number"},
		{"DELETE", "/v1/store/orders/4"},
		{"GET", "/v1/no/such/route"},
		{"POST", "/v1/store/orders"},
		{"GET", "/v1/pets/x"},
	} {
		res, body := h.do(t, tc.method, tc.path)
		wantError(t, res, body, 401, gen.ErrorCodeUnauthorized)
	}
}

func TestRevokedKeyIsRefused(t *testing.T) {
	h := newHarness(t)
	if res, _ := h.authed(t, "GET", "/v1/store/orders"); res.StatusCode != 200 {
		t.Fatalf("got %d before revoking", res.StatusCode)
	}
	if _, err := h.keys.Revoke(context.Background(), "test-free"); err != nil {
		t.Fatal(err)
	}
	res, body := h.authed(t, "GET", "/v1/store/orders")
	wantError(t, res, body, 401, gen.ErrorCodeUnauthorized)
}

func TestDeprecatedPetOperation(t *testing.T) {
	h := newHarness(t)
	checkMarked := func(t *testing.T, res *http.Response) {
		t.Helper()
		want := map[string]string{
			"Deprecation": "@1782864000",
			"Sunset":      "Thu, 01 Jul 2027 00:00:00 GMT",
			"Link":        `<https://docs.petstore.example/migrate>; rel="sunset"`,
		}
		for k, v := range want {
			if got := res.Header.Get(k); got != v {
				t.Errorf("%s: %q, want %q", k, got, v)
			}
		}
	}
	res, body := h.authed(t, "GET", "/v1/pets/7")
	if res.StatusCode != 200 || !strings.Contains(string(body), `"name":"Rex"`) {
		t.Fatalf("got %d %s", res.StatusCode, body)
	}
	checkMarked(t, res)
	for _, tc := range []struct {
		path   string
		authed bool
		status int
	}{{"/v1/pets/8", true, 404}, {"/v1/pets/x", true, 400}, {"/v1/pets/7", false, 401}} {
		var res *http.Response
		if tc.authed {
			res, _ = h.authed(t, "GET", tc.path)
		} else {
			res, _ = h.do(t, "GET", tc.path)
		}
		if res.StatusCode != tc.status {
			t.Fatalf("%s: got %d, want %d", tc.path, res.StatusCode, tc.status)
		}
		checkMarked(t, res)
	}

	h.clock.Set(testSunset.SunsetAt) // the sunset instant itself is past
	res, body = h.authed(t, "GET", "/v1/pets/7")
	wantError(t, res, body, 410, gen.ErrorCodeEndpointSunset)
	checkMarked(t, res)
}

// brokenStore fails every call with err, or panics when err is nil.
type brokenStore struct{ err error }

func (s brokenStore) Load(context.Context, func(order.Order)) (order.Mark, error) {
	if s.err == nil {
		panic("store exploded")
	}
	return order.Mark{}, s.err
}

func (s brokenStore) Since(_ context.Context, m order.Mark, _ int) ([]order.Event, order.Mark, bool, error) {
	return nil, m, false, s.err
}

func (s brokenStore) Version(context.Context) (uint64, error) { return 0, s.err }

func (s brokenStore) Cancel(context.Context, int64) (order.Order, bool, error) {
	return order.Order{}, false, s.err
}

func TestStoreFailures(t *testing.T) {
	secret := errors.New("dial tcp 10.1.2.3:6379: connection refused")
	t.Run("Unavailable", func(t *testing.T) {
		h := newHarness(t, func(c *api.Config) { c.Orders = brokenStore{errors.Join(order.ErrUnavailable, secret)} })
		for _, m := range []struct{ method, path string }{{"GET", "/v1/store/orders"}, {"DELETE", "/v1/store/orders/1"}} {
			res, body := h.authed(t, m.method, m.path)
			e := wantError(t, res, body, 503, gen.ErrorCodeServiceUnavailable)
			if res.Header.Get("Retry-After") == "" || strings.Contains(e.Message, "10.1.2.3") {
				t.Fatalf("Retry-After %q, message %q", res.Header.Get("Retry-After"), e.Message)
			}
		}
	})
	t.Run("Internal", func(t *testing.T) {
		h := newHarness(t, func(c *api.Config) { c.Orders = brokenStore{secret} })
		res, body := h.authed(t, "DELETE", "/v1/store/orders/1")
		if e := wantError(t, res, body, 500, gen.ErrorCodeInternalError); e.Message != "internal error" {
			t.Fatalf("message %q reveals more than it should", e.Message)
		}
	})
	t.Run("Panic", func(t *testing.T) {
		h := newHarness(t, func(c *api.Config) { c.Orders = brokenStore{nil} })
		res, body := h.authed(t, "GET", "/v1/store/orders")
		if e := wantError(t, res, body, 500, gen.ErrorCodeInternalError); strings.Contains(e.Message, "exploded") {
			t.Fatalf("message %q reveals the panic", e.Message)
		}
	})
}

func TestNewNeedsItsParts(t *testing.T) {
	if _, err := api.New(api.Config{}); err == nil {
		t.Fatal("New accepted a config without stores")
	}
}

// TestErrorBodyPrettyOnRequest: an Error object is one line of JSON, indented when the query
// asks for it with pretty, as echo's JSON answers are.
func TestErrorBodyPrettyOnRequest(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct {
		path   string
		indent bool
	}{{"/v1/store/orders", false}, {"/v1/store/orders?pretty", true}, {"/v1/store/orders?x=1", false}} {
		res, body := h.do(t, "GET", c.path)
		wantError(t, res, body, 401, gen.ErrorCodeUnauthorized)
		if got := strings.Contains(string(body), "\n  \"code\""); got != c.indent || res.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: indented %v, Content-Type %q: %s", c.path, got, res.Header.Get("Content-Type"), body)
		}
	}
}

// TestValidationAnswersEachInput: validation remembers the requests it passed, by all it read
// of them. A request that differs in one thing only (a header parameter, the path or the
// query) from one that passed is checked again and refused.
func TestValidationAnswersEachInput(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name, method              string
		passes, fails             string // paths
		passesHeader, failsHeader string // If-None-Match
	}{
		{"header", "GET", "/v1/store/orders", "/v1/store/orders", `"a"`, `"unterminated`},
		{"path", "DELETE", "/v1/store/orders/999999999", "/v1/store/orders/-1", `"a"`, `"a"`},
		{"query", "GET", "/v2/store/orders?status=pending", "/v2/store/orders?petId=-1", `"a"`, `"a"`},
	} {
		for range 2 { // the second time, the passing request is remembered
			if res, body := h.authed(t, tc.method, tc.passes, "If-None-Match", tc.passesHeader); res.StatusCode == 400 {
				t.Fatalf("%s: %s %s: 400 %s", tc.name, tc.method, tc.passes, body)
			}
		}
		res, body := h.authed(t, tc.method, tc.fails, "If-None-Match", tc.failsHeader)
		wantError(t, res, body, 400, gen.ErrorCodeInvalidRequest)
	}
}
