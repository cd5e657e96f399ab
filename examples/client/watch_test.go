package main

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/service"
	"github.com/petstore/orderd/internal/service/servicetest"
)

// lines is an io.Writer whose complete lines a test reads as they are written.
type lines struct {
	mu   sync.Mutex
	part string
	ch   chan string
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part += string(p)
	for {
		line, rest, ok := strings.Cut(l.part, "\n")
		if !ok {
			return len(p), nil
		}
		l.ch <- line
		l.part = rest
	}
}

// watching runs `client watch` with args until the test ends, and returns its output's lines.
func watching(t *testing.T, base, key string, args ...string) <-chan string {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	out := &lines{ch: make(chan string, 100)}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"watch", "--base", base, "--key", key}, args...), func(string) string { return "" }, out, &lines{ch: make(chan string, 100)})
	}()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("watch ended with %v, want a clean exit on interrupt", err)
		}
	})
	return out.ch
}

func nextLine(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case l := <-ch:
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("watch printed nothing for 10 s")
		return ""
	}
}

// TestWatchFollowsFromNowAndResyncsWhenExpired: without --after it reads the orders and
// follows from their Orders-Event-Id; a position the log no longer holds makes it read them
// again and follow on, with no event lost.
func TestWatchFollowsFromNowAndResyncsWhenExpired(t *testing.T) {
	cfg := servicetest.Embedded(t, ordertest.Fixture(), nil)
	key := servicetest.AddKey(t, cfg.Store, "example", order.Business, order.Limits{})
	root := servicetest.Run(t, cfg).URL()
	base := root + api.BasePathV2
	cancel := func(id string) {
		t.Helper()
		req, _ := http.NewRequest("DELETE", base+"/store/orders/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != 204 {
			t.Fatalf("cancel %s: %v %v", id, res, err)
		}
		res.Body.Close()
	}

	out := watching(t, root, key)
	resync := nextLine(t, out)
	if !strings.HasPrefix(resync, "resync: 6 orders, following from ") {
		t.Fatalf("first line %q, want the resync", resync)
	}
	cancel("1")
	if got := nextLine(t, out); !strings.HasSuffix(got, " order.cancelled 1 cancelled") {
		t.Fatalf("got %q, want the cancel of order 1", got)
	}

	// The log keeps only the newest event: following from the first is no longer possible.
	stores, err := service.OpenStores(cfg.Store)
	if err != nil {
		t.Fatal(err)
	}
	defer stores.Close()
	page, err := stores.Events.Events(context.Background(), order.EventQuery{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	oldest := page.Last // the fixture's first creation
	if _, err := stores.Events.Trim(context.Background(), order.Retention{MaxCount: 1}); err != nil {
		t.Fatal(err)
	}
	late := watching(t, root, key, "--after", oldest, "--type", "order.cancelled")
	if got := nextLine(t, late); !strings.HasPrefix(got, "resync: 6 orders, following from ") {
		t.Fatalf("after an expired position: %q, want a resync", got)
	}
	cancel("9223372036854775807")
	if got := nextLine(t, late); !strings.HasSuffix(got, " order.cancelled 9223372036854775807 cancelled") {
		t.Fatalf("got %q, want the cancel of the last order", got)
	}
}
