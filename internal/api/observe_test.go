package api_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/metrics"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/sqlitestore"
)

func TestRequestIDs(t *testing.T) {
	h := newHarness(t)
	res, _ := h.authed(t, "GET", "/v1/store/orders", "X-Request-Id", "client-chosen_id.42")
	if got := res.Header.Get("X-Request-Id"); got != "client-chosen_id.42" {
		t.Fatalf("a well-formed id came back as %q", got)
	}
	seen := map[string]bool{}
	for _, bad := range []string{"", "has space", strings.Repeat("x", 129), "line\u2028break", "semi;colon"} {
		res, _ := h.authed(t, "GET", "/v1/store/orders", "X-Request-Id", bad)
		got := res.Header.Get("X-Request-Id")
		if got == "" || got == bad || seen[got] {
			t.Fatalf("id %q came back as %q; want a new, unique one", bad, got)
		}
		seen[got] = true
	}
}

func TestProtectiveHeaders(t *testing.T) {
	h := newHarness(t)
	ok, _ := h.authed(t, "GET", "/v1/store/orders")
	notFound, _ := h.authed(t, "DELETE", "/v1/store/orders/4")
	unauthorized, _ := h.do(t, "GET", "/v1/store/orders")
	unrouted, _ := h.authed(t, "GET", "/v1/nowhere")
	for name, res := range map[string]*http.Response{"200": ok, "404": notFound, "401": unauthorized, "404 route": unrouted} {
		if res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff", name)
		}
		if res.StatusCode >= 400 && res.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: Cache-Control %q on an error", name, res.Header.Get("Cache-Control"))
		}
	}
}

// TestListPlainVariesOnAcceptEncoding: a client that does not accept gzip gets the list plain,
// whole (its Content-Length), and told once that the answer varies with Accept-Encoding.
func TestListPlainVariesOnAcceptEncoding(t *testing.T) {
	h := newHarness(t)
	req, _ := http.NewRequest("GET", h.srv.URL+"/v1/store/orders", nil)
	req.Header.Set("Authorization", "Bearer "+h.key)
	plain := &http.Client{Transport: &http.Transport{DisableCompression: true}} // sends no Accept-Encoding
	res, err := plain.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "" || !slices.Equal(res.Header.Values("Vary"), []string{"Accept-Encoding"}) ||
		res.ContentLength != int64(len(body)) || !json.Valid(body) {
		t.Fatalf("%d, Content-Encoding %q, Vary %q, Content-Length %d of %d bytes", res.StatusCode,
			res.Header.Get("Content-Encoding"), res.Header.Values("Vary"), res.ContentLength, len(body))
	}
}

func TestListIsGzippedWhenAccepted(t *testing.T) {
	h := newHarness(t)
	req, _ := http.NewRequest("GET", h.srv.URL+"/v1/store/orders", nil)
	req.Header.Set("Authorization", "Bearer "+h.key)
	req.Header.Set("Accept-Encoding", "gzip") // set by hand: the transport then leaves the body compressed
	res, err := h.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(res.Header.Get("Vary"), "Accept-Encoding") {
		t.Fatalf("Content-Encoding %q, Vary %q", res.Header.Get("Content-Encoding"), res.Header.Get("Vary"))
	}
	zr, err := gzip.NewReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	res.Header.Del("Content-Encoding")
	if err := h.contract.Check(req, res, body); err != nil {
		t.Fatalf("the decompressed list breaks the contract: %v", err)
	}
	if !bytes.Contains(body, []byte(`"id":9223372036854775807`)) {
		t.Fatalf("body %s", body)
	}
	// Without Accept-Encoding the body is plain.
	plain, _ := http.NewRequest("GET", h.srv.URL+"/v1/store/orders", nil)
	plain.Header.Set("Authorization", "Bearer "+h.key)
	tr := &http.Transport{DisableCompression: true}
	res2, err := (&http.Client{Transport: tr}).Do(plain)
	if err != nil {
		t.Fatal(err)
	}
	plainBody, err := io.ReadAll(res2.Body)
	res2.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if res2.Header.Get("Content-Encoding") != "" {
		t.Fatalf("compressed without Accept-Encoding")
	}
	// The plain list is sent whole, with its length, not chunked; the compressed one above
	// could not declare the plain length (its reader would have failed short of it).
	if res2.ContentLength != int64(len(plainBody)) || len(res2.TransferEncoding) != 0 {
		t.Fatalf("plain list: Content-Length %d for %d bytes, Transfer-Encoding %q", res2.ContentLength, len(plainBody), res2.TransferEncoding)
	}
}

// TestLongListIsSentWithItsLength: a list longer than net/http's buffer is sent whole with its
// Content-Length (one write, not chunks), plain; compressed, without the plain length.
func TestLongListIsSentWithItsLength(t *testing.T) {
	db := openDB(t)
	if _, err := db.Import(context.Background(), ordertest.Many(100), nil); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(c *api.Config) { c.Orders = sqlitestore.NewOrders(db) })
	for _, encoding := range []string{"", "gzip"} {
		req, _ := http.NewRequest("GET", h.srv.URL+"/v1/store/orders", nil)
		req.Header.Set("Authorization", "Bearer "+h.key)
		if encoding != "" {
			req.Header.Set("Accept-Encoding", encoding)
		}
		res, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatalf("%q: %v", encoding, err)
		}
		if res.Header.Get("Content-Encoding") != encoding {
			t.Fatalf("Content-Encoding %q, want %q", res.Header.Get("Content-Encoding"), encoding)
		}
		if encoding == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
			res.Header.Del("Content-Encoding")
		} else if res.ContentLength != int64(len(body)) || len(res.TransferEncoding) != 0 {
			t.Fatalf("Content-Length %d for %d bytes, Transfer-Encoding %q", res.ContentLength, len(body), res.TransferEncoding)
		}
		if len(body) <= 4096 {
			t.Fatalf("the list is %d bytes, too short to have been chunked", len(body))
		}
		if err := h.contract.Check(req, res, body); err != nil {
			t.Fatalf("%q: %v", encoding, err)
		}
	}
}

// TestAccessLogAndMetrics: one line per request naming the caller by key name and prefix,
// never by key; metrics move with the requests.
func TestAccessLogAndMetrics(t *testing.T) {
	logs := &apitest.Log{}
	m := metrics.New()
	h := newHarness(t, func(c *api.Config) {
		c.Logger, c.AccessLog = slog.New(slog.NewJSONHandler(logs, nil)), logs
		c.Observer = m
		c.Metrics = m.Handler()
	})
	h.authed(t, "GET", "/v1/store/orders", "X-Request-Id", "trace-1")
	h.authed(t, "DELETE", "/v1/store/orders/1")
	h.authed(t, "DELETE", "/v1/store/orders/1")
	h.authed(t, "DELETE", "/v1/store/orders/2")
	h.do(t, "GET", "/v1/store/orders", "Authorization", "Bearer osk_wrong")

	lines := logs.Records(t)
	if len(lines) != 5 {
		t.Fatalf("%d log lines, want 5", len(lines))
	}
	first := lines[0]
	if first["msg"] != "request" || first["request_id"] != "trace-1" || first["route"] != "/v1/store/orders" ||
		first["status"] != float64(200) || first["key_name"] != "test-free" || first["key_prefix"] != h.key[:10] {
		t.Fatalf("access line %v", first)
	}
	if lines[4]["client"] != "127.0.0.1" || lines[4]["status"] != float64(401) {
		t.Fatalf("line of an unauthenticated request: %v", lines[4])
	}
	// Every line has the same fields: these, and the caller's.
	for i, line := range lines {
		fields := slices.Sorted(maps.Keys(line))
		want := []string{"bytes", "duration_ms", "key_name", "key_prefix", "level", "method", "msg", "request_id", "route", "status", "time"}
		if i == 4 {
			want = []string{"bytes", "client", "duration_ms", "level", "method", "msg", "request_id", "route", "status", "time"}
		}
		if !slices.Equal(fields, want) || line["level"] != "INFO" {
			t.Errorf("line %d: fields %v, want %v; level %v", i, fields, want, line["level"])
		}
		if _, ok := line["duration_ms"].(float64); !ok {
			t.Errorf("line %d: duration_ms %v is no number", i, line["duration_ms"])
		}
		if s, _ := line["time"].(string); !isTime(s) {
			t.Errorf("line %d: time %v is not RFC 3339", i, line["time"])
		}
	}
	if all := logs.String(); strings.Contains(all, h.key) || strings.Contains(all, "osk_wrong") {
		t.Fatal("a key was logged")
	}

	res, err := http.Get(h.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{
		`orderd_http_requests_total{operation="listOrders",status="200"} 1`,
		`orderd_http_requests_total{operation="listOrders",status="401"} 1`,
		`orderd_http_requests_total{operation="cancelOrder",status="204"} 2`,
		`orderd_http_requests_total{operation="cancelOrder",status="409"} 1`,
		`orderd_cancellations_total{outcome="cancelled"} 1`,
		`orderd_cancellations_total{outcome="already_cancelled"} 1`,
		`orderd_cancellations_total{outcome="shipped"} 1`,
		`orderd_ratelimit_decisions_total{outcome="admitted"} 5`,
	} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestAStreamIsTimedToItsOpening: the duration a stream observes is the time to open it, not
// how long its client stayed, which would swamp the latency of the operation's pages; the
// access line keeps how long it lasted. The clock moves an hour while the stream is open.
func TestAStreamIsTimedToItsOpening(t *testing.T) {
	logs := &apitest.Log{}
	m := metrics.New()
	closing := make(chan struct{})
	h := newHarness(t, func(c *api.Config) {
		c.Logger, c.AccessLog = slog.New(slog.NewJSONHandler(logs, nil)), logs
		c.Observer, c.Metrics, c.Closing = m, m.Handler(), closing
	})
	s := h.stream(t, "/v2/store/events")
	s.Next(t)              // the retry hint: the stream's 200 is written
	h.clock.Add(time.Hour) // the client stays
	close(closing)
	s.ReadToEnd(t) // the answer ended after observe returned

	metric := func(part string) float64 {
		return apitest.Metric(t, h.srv.URL, "orderd_http_request_duration_seconds_"+part+`{operation="v2.listEvents"}`)
	}
	if count, sum := metric("count"), metric("sum"); count != 1 || sum != 0 {
		t.Errorf("the stream observed %v s in %v observations; want 0 s (the clock did not move while it opened) in 1", sum, count)
	}
	lines := logs.Records(t)
	if len(lines) == 0 || lines[0]["route"] != "/v2/store/events" || lines[0]["duration_ms"] != float64(time.Hour.Milliseconds()) {
		t.Errorf("access lines %v; want the stream's first, lasting an hour", lines)
	}
}

func isTime(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}
