package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestLoopbackOnly(t *testing.T) {
	for raw, ok := range map[string]bool{
		"http://127.0.0.1:8080/v1/store/orders": true,
		"http://[::1]:8080/":                    true,
		"http://localhost:8080/":                true,
		"http://10.0.0.1:8080/":                 false,
		"http://example.com/":                   false,
		"https://127.0.0.1/":                    false,
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if err := loopbackOnly(u); (err == nil) != ok {
			t.Errorf("%s: err = %v, want ok %v", raw, err, ok)
		}
	}
}

// Both clients against a real server on loopback: every request answered and counted, by
// status, with the body read whole however it is framed, so that the connection is reused.
func TestRunCountsEveryAnswer(t *testing.T) {
	var conns, requests atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		if r.URL.Query().Get("chunked") != "" {
			w.Write([]byte(strings.Repeat("x", 10000)))
			w.(http.Flusher).Flush()
			w.Write([]byte("y"))
			return
		}
		w.Write([]byte("ok"))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	for _, kind := range []string{"raw", "nethttp"} {
		for _, tc := range []struct {
			query, key string
			non2xx     int
		}{{"", "k", 0}, {"?chunked=1", "k", 0}, {"", "wrong", 100}} {
			u, _ := url.Parse(srv.URL + "/" + tc.query)
			hdrs := []string{"Authorization: Bearer " + tc.key}
			var newClient func() client
			if kind == "raw" {
				req, err := rawRequest("GET", u, hdrs)
				if err != nil {
					t.Fatal(err)
				}
				newClient = func() client { return &rawClient{addr: u.Host, req: req, timeout: 5 * time.Second} }
			} else {
				c := newNetHTTP("GET", u.String(), hdrs, 2, 5*time.Second)
				newClient = func() client { return c }
			}
			conns.Store(0)
			r := run(plan{rate: 200, conns: 2, warmup: 100 * time.Millisecond, duration: 500 * time.Millisecond, late: time.Second}, newClient)
			if r.sent != 100 || r.errors != 0 || r.non2xx != tc.non2xx || len(r.latencies) != 100 {
				t.Errorf("%s %q key %q: sent %d errors %d non-2xx %d answered %d, want 100 0 %d 100",
					kind, tc.query, tc.key, r.sent, r.errors, r.non2xx, len(r.latencies), tc.non2xx)
			}
			if n := conns.Load(); n > 2 {
				t.Errorf("%s %q: %d connections for 2 workers: answers were not read whole", kind, tc.query, n)
			}
		}
	}
	if n := requests.Load(); n != 6*120 {
		t.Errorf("server saw %d requests, want %d", n, 6*120)
	}
}
