package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/http/httpguts"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/order"
)

// fuzzTarget is the whole handler, in process, with a key whose limits fuzzing cannot spend.
type fuzzTarget struct {
	handler  http.Handler
	key      string
	contract *apitest.Contract
}

func newFuzzTarget(f *testing.F) *fuzzTarget {
	h := newHarness(f)
	key := h.addKey(f, "fuzz", order.Enterprise, order.Limits{PerMinute: 1 << 40, PerDay: 1 << 40})
	return &fuzzTarget{handler: h.srv.Config.Handler, key: key, contract: h.contract}
}

// serve answers one request and holds the answer to the rules every answer keeps: no panic,
// no 5xx (the stores in memory are always there), a JSON Error for every 4xx (returned), and
// nothing outside openapi.yaml.
func (ft *fuzzTarget) serve(t *testing.T, req *http.Request) (int, gen.Error) {
	rec := httptest.NewRecorder()
	ft.handler.ServeHTTP(rec, req)
	res := rec.Result()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 500 {
		t.Fatalf("%s %q → %d: %s", req.Method, req.URL.RequestURI(), res.StatusCode, body)
	}
	var e gen.Error
	if res.StatusCode >= 400 && req.Method != http.MethodHead {
		if ct := res.Header.Get("Content-Type"); ct != "application/json" || json.Unmarshal(body, &e) != nil || int(e.Status) != res.StatusCode || e.Code == "" {
			t.Fatalf("%s %q → %d, %q: %s; want a JSON Error", req.Method, req.URL.RequestURI(), res.StatusCode, ct, body)
		}
	}
	if err := ft.contract.Check(req, res, body); err != nil {
		t.Fatalf("%s %q → %d breaks the contract: %v", req.Method, req.URL.RequestURI(), res.StatusCode, err)
	}
	return res.StatusCode, e
}

// FuzzHandler feeds the whole handler random methods, paths, headers and bodies.
func FuzzHandler(f *testing.F) {
	ft := newFuzzTarget(f)
	for _, s := range []struct {
		method, path, name, value, body string
		authed                          bool
	}{
		{"GET", "/v1/store/orders", "If-None-Match", `W/"x"`, "", true},
		{"DELETE", "/v1/store/orders/1", "", "", "", true},
		{"DELETE", "/v1/store/orders/9223372036854775808", "", "", "", true},
		{"GET", "/v1/pets/7", "Accept", "text/html", "", true},
		{"POST", "/v1/store/orders", "Content-Type", "application/json", `{"id":1}`, true},
		{"GET", "/v1/store/orders", "Authorization", "Basic x", "", false},
		{"PATCH", "/v1/../v1/store/orders/%00", "X-Request-Id", "a\x7f", "", true},
		{"OPTIONS", "/v1/openapi.yaml", "X-Forwarded-For", "10.0.0.1", "", false},
	} {
		f.Add(s.method, s.path, s.name, s.value, s.body, s.authed)
	}
	f.Fuzz(func(t *testing.T, method, path, name, value, body string, authed bool) {
		req, err := http.NewRequest(method, "http://127.0.0.1"+path, strings.NewReader(body))
		if err != nil || req.URL.Host != "127.0.0.1" {
			return // not a request an HTTP server would hand to the handler
		}
		if name != "" {
			if !httpguts.ValidHeaderFieldName(name) || !httpguts.ValidHeaderFieldValue(value) {
				return
			}
			req.Header.Set(name, value)
		}
		if authed {
			req.Header.Set("Authorization", "Bearer "+ft.key)
		}
		req.RemoteAddr = "127.0.0.1:1234"
		ft.serve(t, req)
	})
}

// FuzzCancelOrderID feeds the order id of a cancel with anything a path segment can hold:
// only an int64 from 0 up may reach the store; everything else is a 400 that names orderId.
func FuzzCancelOrderID(f *testing.F) {
	ft := newFuzzTarget(f)
	for _, id := range []string{"1", "0", "-1", "9223372036854775807", "9223372036854775808", "1e3", "0x10", "+1", " 1", "1.0", "%31", "", "٣"} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		req, err := http.NewRequest("DELETE", "http://127.0.0.1/v1/store/orders/"+id, nil)
		if err != nil || req.URL.Host != "127.0.0.1" || strings.Contains(req.URL.Path[len("/v1/store/orders/"):], "/") {
			return
		}
		req.Header.Set("Authorization", "Bearer "+ft.key)
		req.RemoteAddr = "127.0.0.1:1234"
		status, e := ft.serve(t, req)
		code := e.Code
		switch {
		case status == 204 || code == gen.ErrorCodeOrderNotFound || code == gen.ErrorCodeOrderAlreadyShipped:
			// Only a decimal int64 from 0 up reaches the store.
			raw, _ := url.PathUnescape(req.URL.Path[len("/v1/store/orders/"):])
			if n, err := strconv.ParseInt(raw, 10, 64); err != nil || n < 0 {
				t.Fatalf("id %q reached the store: %d", id, status)
			}
		case status == 400 || status == 404 || status == 405:
		default:
			t.Fatalf("id %q → %d", id, status)
		}
	})
}

// FuzzFindQuery feeds v2's find any raw query: never a 5xx (serve's rule), every answer
// within openapi-v2.yaml, and every 400 naming the parameter: one of validation's, which name
// openapi-v2.yaml, or a refused pageToken; never the generated binding's refusal of a value
// validation let through.
func FuzzFindQuery(f *testing.F) {
	ft := newFuzzTarget(f)
	for _, q := range []string{
		"", "pageSize=1", "pageSize=0", "pageSize=1001", "status=pending&status=shipped", "status=bogus",
		"petId=7&shipDateFrom=2026-11-16T00:00:00Z&shipDateBefore=2026-11-23T00:00:00%2B02:00",
		"shipDateFrom=yesterday", "pageToken=AgAAAAAAAAAB", "pageToken=%ZZ", "status=pending&status=pending&status=pending&status=pending",
		"pageSize=2&pageToken=" + strings.Repeat("A", 55), "x=1&pageSize=3", ";", "&&=&",
		"shipDateFrom=2026-12-31T23:59:60Z", "shipDateBefore=2026-02-30T00:00:00Z", "shipDateFrom=2026-11-03T11:00:00%2B99:00",
		"shipDateFrom=2026-11-03T11:00:00%2B24:00", "pageSize=1&pageSize=2", "pageToken=a&pageToken=b", "petId=1&petId=1",
		"shipDateFrom=2026-11-23T00:00:00Z&shipDateBefore=2026-11-16T00:00:00Z", "pageToken=",
	} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, query string) {
		req, err := http.NewRequest("GET", "http://127.0.0.1/v2/store/orders", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL.RawQuery = query
		if !httpguts.ValidHeaderFieldValue(req.URL.RequestURI()) || strings.ContainsAny(query, " #") {
			return // not a request line an HTTP server would hand to the handler
		}
		req.Header.Set("Authorization", "Bearer "+ft.key)
		req.RemoteAddr = "127.0.0.1:1234"
		status, e := ft.serve(t, req)
		msg := e.Message
		switch {
		case status == 200:
		case status != 400:
			t.Fatalf("%q → %d, want 200 or 400", query, status)
		case !strings.HasPrefix(msg, "pageToken ") && !(strings.HasPrefix(msg, "query parameter ") && strings.HasSuffix(msg, "; see openapi-v2.yaml")):
			t.Fatalf("%q → 400 %q: names no parameter of openapi-v2.yaml", query, msg)
		}
	})
}
