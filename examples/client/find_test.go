package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/ratelimit/ratelimittest"
	"github.com/petstore/orderd/internal/service/servicetest"
)

// findService serves the real service holding orders, with one key of plan p.
func findService(t *testing.T, orders []order.Order, p order.Plan, limits order.Limits, clock *ratelimittest.Clock) (base, key string) {
	t.Helper()
	cfg := servicetest.Embedded(t, orders, nil)
	if clock != nil {
		cfg.Now = clock.Now
	}
	key = servicetest.AddKey(t, cfg.Store, "example", p, limits)
	return servicetest.Run(t, cfg).URL(), key
}

// wantFind is what `client find` prints for the orders f keeps.
func wantFind(orders []order.Order, f order.Filter) string {
	var b strings.Builder
	model := ordertest.Model(orders, f)
	for _, o := range model {
		b.WriteString(orderLine(o) + "\n")
	}
	fmt.Fprintf(&b, "%d orders\n", len(model))
	return b.String()
}

// TestFindWalksEveryPage: the walk over a few hundred orders, with small pages and a filter
// sparse enough that some pages come back short or empty, prints exactly the model.
func TestFindWalksEveryPage(t *testing.T) {
	orders := ordertest.Many(2500)
	base, key := findService(t, orders, order.Enterprise, order.Limits{PerMinute: 100000, PerDay: 1000000}, nil)
	day := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	pet := int64(3)
	for _, tc := range []struct {
		args []string
		f    order.Filter
	}{
		{[]string{"--page-size", "7"}, order.Filter{}},
		{[]string{"--status", "pending", "--status", "cancelled", "--page-size", "50"},
			order.Filter{Statuses: []order.Status{order.StatusPending, order.StatusCancelled}}},
		{[]string{"--pet", "3", "--ship-from", "2026-01-03T00:00:00Z", "--ship-before", "2026-01-04T00:00:00Z", "--page-size", "2"},
			order.Filter{PetID: &pet, ShipFrom: &day, ShipBefore: ptr(day.Add(24 * time.Hour))}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			env := func(string) string { return key }
			if err := run(context.Background(), append([]string{"find", "--base", base}, tc.args...), env, &stdout, &stderr); err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			if want := wantFind(orders, tc.f); stdout.String() != want {
				t.Fatalf("output (%d bytes) is not the model (%d bytes):\n%.2000s", stdout.Len(), len(want), stdout.String())
			}
		})
	}
}

// TestFindWaitsOutRetryAfter: a key with 3 requests a minute walks 6 pages; the client
// waits out each 429's Retry-After (on the service's clock) and still prints every order.
func TestFindWaitsOutRetryAfter(t *testing.T) {
	start := time.Date(2026, 11, 23, 10, 0, 30, 0, time.UTC)
	clock := ratelimittest.NewClock(start)
	orders := ordertest.Fixture()
	base, key := findService(t, orders, order.Enterprise, order.Limits{PerMinute: 3, PerDay: 100}, clock)

	answers := &seen{next: &http.Transport{}}
	doer := newRetryDoer(&http.Client{Transport: answers})
	var slept []time.Duration
	doer.Sleep = func(ctx context.Context, d time.Duration) error {
		slept = append(slept, d)
		clock.Add(d)
		return ctx.Err()
	}
	var stdout, stderr bytes.Buffer
	err := runFind(context.Background(), doer, []string{"--base", base, "--key", key, "--page-size", "1"},
		func(string) string { return "" }, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if want := wantFind(orders, order.Filter{}); stdout.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", stdout.String(), want)
	}
	// Every 429 was waited out, for at least its Retry-After, before the next attempt.
	var refusals []answer
	for _, a := range answers.all() {
		if a.status == http.StatusTooManyRequests {
			refusals = append(refusals, a)
		}
	}
	if len(refusals) == 0 || len(slept) != len(refusals) {
		t.Fatalf("%d answers 429, %d waits: want 429s (3 a minute, 6 pages), each waited out once", len(refusals), len(slept))
	}
	for i, a := range refusals {
		secs, err := strconv.Atoi(a.retryAfter)
		if err != nil || slept[i] < time.Duration(secs)*time.Second {
			t.Fatalf("wait %d = %v for Retry-After %q", i, slept[i], a.retryAfter)
		}
	}
}

func TestFindUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--key", "k", "--status", "lost"}, `"lost" is not pending, shipped or cancelled`},
		{[]string{"--key", "k", "--page-size", "1001"}, "--page-size 1001"},
		{[]string{"--key", "k", "--ship-from", "yesterday"}, `--ship-from "yesterday"`},
		{[]string{"--key", "k", "--pet", "-2"}, "--pet -2"},
		{[]string{"--base", "http://127.0.0.1:1"}, "no API key"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), append([]string{"find"}, tc.args...), func(string) string { return "" }, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
			if code := exitCode(err, &bytes.Buffer{}); code != 2 {
				t.Fatalf("exit status %d, want 2", code)
			}
		})
	}
}
