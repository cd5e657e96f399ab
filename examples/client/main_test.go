package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/ratelimit/ratelimittest"
	"github.com/petstore/orderd/internal/service/servicetest"
)

// instance is the real orderd service on a loopback port, holding ordertest.Fixture().
type instance struct {
	root   string // the service's root URL, which --base takes
	base   string // the URL of version 1 of the API, /v1 included
	key    string
	client *http.Client
}

// newService serves the real service with one key of plan p. With a clock, the limiter and
// the handler read it instead of the wall clock, so a test can move time past a Retry-After.
func newService(t *testing.T, p order.Plan, limits order.Limits, clock *ratelimittest.Clock) *instance {
	t.Helper()
	cfg := servicetest.Embedded(t, ordertest.Fixture(), nil)
	if clock != nil {
		cfg.Now = clock.Now
	}
	key := servicetest.AddKey(t, cfg.Store, "example", p, limits)
	svc := servicetest.Run(t, cfg)
	return &instance{root: svc.URL(), base: svc.URL() + api.BasePath, key: key, client: &http.Client{Transport: &http.Transport{}}}
}

// run runs the program against the service with its key in ORDERD_KEY.
func (s *instance) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := map[string]string{"ORDERD_KEY": s.key}
	err := run(context.Background(), append([]string{"--base", s.root}, args...),
		func(k string) string { return env[k] }, &stdout, &stderr)
	return stdout.String(), err
}

// orderLine is how the program prints o, derived from the fixture rather than typed out.
func orderLine(o order.Order) string {
	return fmt.Sprintf("%d %s %d %d %s", o.ID, o.Status, o.PetID, o.Quantity,
		o.ShipDate.UTC().Format(time.RFC3339Nano))
}

// wantListing is the listing of orders after applying the given status changes.
func wantListing(changed map[int64]order.Status) string {
	var b strings.Builder
	fixture := ordertest.Fixture()
	for _, o := range fixture {
		if s, ok := changed[o.ID]; ok {
			o.Status = s
		}
		b.WriteString(orderLine(o) + "\n")
	}
	fmt.Fprintf(&b, "%d orders\n", len(fixture))
	return b.String()
}

func TestListPrintsEveryOrderExactly(t *testing.T) {
	s := newService(t, order.Free, order.Limits{}, nil)
	out, err := s.run(t)
	if err != nil {
		t.Fatal(err)
	}
	if want := wantListing(nil); out != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out, want)
	}
	maxID := strconv.FormatInt(math.MaxInt64, 10)
	if !strings.Contains(out, "\n"+maxID+" pending ") {
		t.Fatalf("output lacks order %s, exact:\n%s", maxID, out)
	}
	if !strings.HasSuffix(out, "\n6 orders\n") {
		t.Fatalf("output does not end with the count of the 6 orders:\n%s", out)
	}
}

func TestKeyFlagWinsOverEnvironment(t *testing.T) {
	s := newService(t, order.Free, order.Limits{}, nil)
	var stdout, stderr bytes.Buffer
	getenv := func(string) string { return "osk_not-a-key" }
	if err := run(context.Background(), []string{"--base", s.root, "--key", s.key}, getenv, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if want := wantListing(nil); stdout.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", stdout.String(), want)
	}
}

func TestCancelPendingOrder(t *testing.T) {
	s := newService(t, order.Free, order.Limits{}, nil)
	out, err := s.run(t, "--cancel", "1")
	if err != nil {
		t.Fatal(err)
	}
	cancelled := map[int64]order.Status{1: order.StatusCancelled}
	if want := "cancelled order 1\n" + wantListing(cancelled); out != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out, want)
	}
	// A later run sees it too: the service changed, not just this run's view of it.
	out, err = s.run(t)
	if err != nil {
		t.Fatal(err)
	}
	if want := wantListing(cancelled); out != want {
		t.Fatalf("later listing:\n%s\nwant:\n%s", out, want)
	}
	// Cancelling is idempotent: again is 204, and nothing else changes.
	if out, err = s.run(t, "--cancel", "1"); err != nil || !strings.HasPrefix(out, "cancelled order 1\n") {
		t.Fatalf("second cancel: %v\n%s", err, out)
	}
}

func TestCancelMaxInt64IsExact(t *testing.T) {
	s := newService(t, order.Free, order.Limits{}, nil)
	id := strconv.FormatInt(math.MaxInt64, 10)
	out, err := s.run(t, "--cancel", id)
	if err != nil {
		t.Fatal(err)
	}
	if want := "cancelled order " + id + "\n" + wantListing(map[int64]order.Status{math.MaxInt64: order.StatusCancelled}); out != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out, want)
	}
}

func TestCancelRefusalsAreErrors(t *testing.T) {
	s := newService(t, order.Free, order.Limits{}, nil)
	for _, tc := range []struct {
		id, want string
	}{
		{"2", "409 order_already_shipped"},
		{"4", "404 order_not_found"},
	} {
		t.Run(tc.id, func(t *testing.T) {
			out, err := s.run(t, "--cancel", tc.id)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
			if out != "" {
				t.Fatalf("printed %q on a refused cancel", out)
			}
			if code := exitCode(err, &bytes.Buffer{}); code != 1 {
				t.Fatalf("exit status %d, want 1", code)
			}
		})
	}
	// Nothing changed.
	out, err := s.run(t)
	if err != nil || out != wantListing(nil) {
		t.Fatalf("listing after refusals: %v\n%s", err, out)
	}
}

func TestWrongKeyIsUnauthorized(t *testing.T) {
	s := newService(t, order.Free, order.Limits{}, nil)
	out, err := s.run(t, "--key", "osk_not-a-key")
	if err == nil || !strings.Contains(err.Error(), "401 unauthorized") || out != "" {
		t.Fatalf("got %q, %v; want a 401 unauthorized error", out, err)
	}
}

func TestUsageErrors(t *testing.T) {
	noEnv := func(string) string { return "" }
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"MissingKey", []string{"--base", "http://127.0.0.1:1"}, "no API key"},
		{"NegativeID", []string{"--key", "k", "--cancel", "-1"}, "--cancel -1"},
		{"IDOverInt64", []string{"--key", "k", "--cancel", "9223372036854775808"}, "cancel"},
		{"StrayArgument", []string{"--key", "k", "list"}, `unexpected argument "list"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tc.args, noEnv, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
			if code := exitCode(err, &bytes.Buffer{}); code != 2 {
				t.Fatalf("exit status %d, want 2", code)
			}
			if stdout.Len() != 0 {
				t.Fatalf("printed %q", stdout.String())
			}
		})
	}
}

// seen records the status and Retry-After of every answer the client receives.
type seen struct {
	next http.RoundTripper
	mu   sync.Mutex
	res  []answer
}

func (s *seen) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := s.next.RoundTrip(req)
	if err == nil {
		s.mu.Lock()
		s.res = append(s.res, answer{res.StatusCode, res.Header.Get("Retry-After")})
		s.mu.Unlock()
	}
	return res, err
}

func (s *seen) all() []answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]answer(nil), s.res...)
}

func TestRetryAfterOfTheRealService(t *testing.T) {
	// Half a minute into the UTC minute, so that the minute window, not the day, binds.
	start := time.Date(2026, 11, 23, 10, 0, 30, 0, time.UTC)
	clock := ratelimittest.NewClock(start)
	s := newService(t, order.Enterprise, order.Limits{PerMinute: 1, PerDay: 100}, clock)

	// Spend the minute.
	req, err := http.NewRequest(http.MethodGet, s.base+"/store/orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.key)
	res, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("first request: %d, want 200", res.StatusCode)
	}

	client := s.client
	answers := &seen{next: client.Transport}
	client.Transport = answers
	doer := newRetryDoer(client)
	var slept []time.Duration
	doer.Sleep = func(ctx context.Context, d time.Duration) error {
		// The service's time passes instead of the test's.
		slept = append(slept, d)
		clock.Add(d)
		return ctx.Err()
	}
	var stdout, stderr bytes.Buffer
	err = runWith(context.Background(), doer, []string{"--base", s.root, "--key", s.key},
		func(string) string { return "" }, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if want := wantListing(nil); stdout.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", stdout.String(), want)
	}

	got := answers.all()
	if len(got) < 2 || got[0].status != http.StatusTooManyRequests || got[len(got)-1].status != http.StatusOK {
		t.Fatalf("answers %+v, want a 429 first and a 200 last", got)
	}
	if len(slept) != len(got)-1 {
		t.Fatalf("slept %v for answers %+v, want one wait per retried answer", slept, got)
	}
	for i, w := range slept {
		if got[i].status != http.StatusTooManyRequests {
			continue
		}
		secs, err := strconv.Atoi(got[i].retryAfter)
		if err != nil || secs < 1 {
			t.Fatalf("answer %d: Retry-After %q, want whole seconds, at least 1", i, got[i].retryAfter)
		}
		if w < time.Duration(secs)*time.Second {
			t.Fatalf("wait %d = %v, shorter than the server's Retry-After %ds", i, w, secs)
		}
	}
	// The server's Retry-After is the rest of the minute the first request spent.
	minuteEnd, _ := ratelimit.WindowEnds(start)
	if want := strconv.Itoa(int(minuteEnd.Sub(start) / time.Second)); got[0].retryAfter != want {
		t.Fatalf("Retry-After %q, want the %s seconds left in the minute", got[0].retryAfter, want)
	}
}

// TestHelpNamesTheFlagsWithTwoDashes: each command's --help lists its flags as they are
// written, --base among them with the service's root URL as its default.
func TestHelpNamesTheFlagsWithTwoDashes(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"find", "--help"}, {"watch", "-h"}} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr)
		help := stdout.String() + stderr.String()
		if code := exitCode(err, &bytes.Buffer{}); code != 0 || !strings.Contains(help, "\n  --base\n") || !strings.Contains(help, "\n  --key\n") ||
			strings.Contains(help, "\n  -base") || !strings.Contains(help, "(default http://127.0.0.1:8080)") || strings.Contains(help, "8080/v") {
			t.Errorf("%v: exit %d:\n%s", args, code, help)
		}
	}
}
