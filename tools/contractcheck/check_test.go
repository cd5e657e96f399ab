package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/service/servicetest"
)

func TestRun(t *testing.T) {
	t.Run("TheRealServicePasses", func(t *testing.T) {
		cfg := servicetest.Embedded(t, ordertest.Fixture(), nil)
		key := servicetest.AddKey(t, cfg.Store, "checker", order.Free, order.Limits{})
		svc := servicetest.Run(t, cfg)
		// The root checks both versions; a version's base, that version alone.
		for _, tc := range []struct {
			base, versions string
			passed         int
		}{
			{svc.URL(), "/v1 /v2", 26},
			{svc.URL() + "/v1", "/v1", 12},
			{svc.URL() + "/v2/", "/v2", 14},
		} {
			c, err := New(Config{Base: tc.base, Key: key})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := c.Run(context.Background(), &out); err != nil || !strings.HasSuffix(out.String(), fmt.Sprintf("%d passed, 0 failed\n", tc.passed)) {
				t.Fatalf("--base %s: %v\n%s", tc.base, err, out.String())
			}
			var versions []string
			for _, line := range strings.Split(out.String(), "\n") {
				if _, path, ok := strings.Cut(line, svc.Addr()); ok && !slices.Contains(versions, path[:3]) {
					versions = append(versions, path[:3])
				}
			}
			if got := strings.Join(versions, " "); got != tc.versions {
				t.Errorf("--base %s checked %s, want %s:\n%s", tc.base, got, tc.versions, out.String())
			}
		}
	})
	t.Run("ErrFailed", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "nope", http.StatusTeapot)
		}))
		defer srv.Close()
		c, err := New(Config{Base: srv.URL + "/v1/", Key: "osk_x"})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := c.Run(context.Background(), &out); !errors.Is(err, ErrFailed) || !strings.HasSuffix(out.String(), "0 passed, 11 failed\n") {
			t.Fatalf("%v\n%s", err, out.String())
		}
		// Version 2's checks fail too; those that need a page the list did not give are not run.
		c, err = New(Config{Base: srv.URL + "/v2", Key: "osk_x"})
		if err != nil {
			t.Fatal(err)
		}
		out.Reset()
		if err := c.Run(context.Background(), &out); !errors.Is(err, ErrFailed) || !strings.HasSuffix(out.String(), "0 passed, 11 failed\n") {
			t.Fatalf("%v\n%s", err, out.String())
		}
	})
	t.Run("NoIDIsGuessedWithoutTheList", func(t *testing.T) {
		// A list that does not show which ids are used must not lead to a request naming an
		// id: the demo data holds a pending order with the largest int64.
		for name, list := range map[string]http.HandlerFunc{
			"ListFails": func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "busy", http.StatusServiceUnavailable)
			},
			"ListIsNotJSON": func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`[{"id":1`))
			},
			"ListIsNull": func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`null`))
			},
		} {
			t.Run(name, func(t *testing.T) {
				var mu sync.Mutex
				var byID []string // requests that named a valid int64 id
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/v1/store/orders" && r.Method == "GET" && r.Header.Get("Authorization") == "Bearer osk_x" {
						list(w, r)
						return
					}
					last := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
					if _, err := strconv.ParseInt(last, 10, 64); err == nil {
						mu.Lock()
						byID = append(byID, r.Method+" "+r.URL.Path)
						mu.Unlock()
					}
					http.Error(w, "nope", http.StatusTeapot)
				}))
				defer srv.Close()
				c, err := New(Config{Base: srv.URL, Key: "osk_x"})
				if err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				err = c.Run(context.Background(), &out)
				if len(byID) > 0 {
					t.Fatalf("requests named an id no list showed unused: %v\n%s", byID, out.String())
				}
				for _, want := range []string{
					"FAIL cancel an order that does not exist: DELETE " + strings.TrimPrefix(srv.URL, "http://") + "/v1/store/orders/{id}: not run: ",
					"FAIL deprecated pet that does not exist: GET " + strings.TrimPrefix(srv.URL, "http://") + "/v1/pets/{id}: not run: ",
				} {
					if !strings.Contains(out.String(), want) {
						t.Errorf("the report lacks %q", want)
					}
				}
				if !errors.Is(err, ErrFailed) {
					t.Errorf("Run: %v, want ErrFailed\n%s", err, out.String())
				}
			})
		}
	})
}

// TestCommandLine: the command's exit statuses and its one line on stderr: 2 for a bad
// flag, naming it; 1, saying so, when nothing answers or an answer breaks the contract.
func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--base", "notaurl", "--key", "k"}, 2, "--base"},
		{[]string{"--base", "ftp://h", "--key", "k"}, 2, "--base"},
		{[]string{"--base", "http://h", "--key", "k", "--timeout", "0s"}, 2, "--timeout"},
		{[]string{"--key", "k"}, 2, "--base and --key are required"},
		{[]string{"--base", "http://127.0.0.1:1", "--key", "k"}, 1, "nothing answered at http://127.0.0.1:1/v1"},
	} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), tc.args, &out, &errOut); code != tc.code || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut.String(), tc.code, tc.want)
		}
	}
}
