package main

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stub is a server that answers from a script, one answer per request, repeating the last
// one when the script runs out. It stands in for the service only here, where the point is
// the doer's reaction to exact answers the real service cannot be made to give on demand.
type stub struct {
	srv      *httptest.Server
	requests atomic.Int64
}

type answer struct {
	status     int
	retryAfter string // "" sends no Retry-After
}

func newStub(t *testing.T, script ...answer) *stub {
	t.Helper()
	s := &stub{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(s.requests.Add(1))
		a := script[min(n, len(script))-1]
		if a.retryAfter != "" {
			w.Header().Set("Retry-After", a.retryAfter)
		}
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, "answer "+strconv.Itoa(n))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// sleeps records the waits a retryDoer asks for, without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// testDoer is a doer with the defaults, instant sleeps and a seeded random source, so that
// a failure replays exactly.
func testDoer(client *http.Client, s *sleeps) *retryDoer {
	d := newRetryDoer(client)
	d.Sleep = s.sleep
	d.Int64N = rand.New(rand.NewPCG(1, 2)).Int64N
	return d
}

func get(t *testing.T, ctx context.Context, d *retryDoer, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d.Do(req)
}

// backoffBound is the exclusive upper bound of the jitter after the given number of
// earlier refusals, computed from the doer's settings.
func backoffBound(d *retryDoer, refusals int) time.Duration {
	b := d.BaseBackoff
	for range refusals {
		b *= 2
	}
	return min(b, d.MaxBackoff)
}

// closeCounter is a transport that counts the response bodies closed, to show that the
// answers a doer retries do not keep their connections.
type closeCounter struct {
	next   http.RoundTripper
	closed atomic.Int64
}

func (c *closeCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := c.next.RoundTrip(req)
	if err == nil {
		res.Body = &countedBody{ReadCloser: res.Body, closed: &c.closed}
	}
	return res, err
}

type countedBody struct {
	io.ReadCloser
	closed *atomic.Int64
}

func (b *countedBody) Close() error {
	b.closed.Add(1)
	return b.ReadCloser.Close()
}

func TestRetryHonoursRetryAfterThenSucceeds(t *testing.T) {
	s := newStub(t, answer{429, "1"}, answer{429, "1"}, answer{200, ""})
	var slept sleeps
	client := s.srv.Client()
	counter := &closeCounter{next: client.Transport}
	client.Transport = counter
	d := testDoer(client, &slept)
	var asked []int64
	rnd := d.Int64N
	d.Int64N = func(n int64) int64 { asked = append(asked, n); return rnd(n) }

	res, err := get(t, context.Background(), d, s.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || string(body) != "answer 3" {
		t.Fatalf("got %d %q, want 200 from the third attempt", res.StatusCode, body)
	}
	if n := s.requests.Load(); n != 3 {
		t.Fatalf("%d attempts, want 3", n)
	}
	if n := counter.closed.Load(); n != 3 {
		t.Fatalf("%d bodies closed, want 3: both retried answers and the final one", n)
	}
	waits := slept.all()
	if len(waits) != 2 {
		t.Fatalf("slept %v, want two waits", waits)
	}
	for i, w := range waits {
		bound := backoffBound(d, i)
		if asked[i] != int64(bound) {
			t.Errorf("wait %d: jitter drawn below %v, want below %v", i, time.Duration(asked[i]), bound)
		}
		if w < time.Second || w >= time.Second+bound {
			t.Errorf("wait %d = %v, want Retry-After 1s plus jitter in [0, %v)", i, w, bound)
		}
	}
}

func TestRetryJitterStaysWithinBounds(t *testing.T) {
	// The extremes of the random source give the extremes of the wait: exactly Retry-After,
	// and just under Retry-After plus the backoff, which doubles per refusal up to its cap.
	for _, tc := range []struct {
		name string
		pick func(n int64) int64
	}{
		{"Lowest", func(int64) int64 { return 0 }},
		{"Highest", func(n int64) int64 { return n - 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStub(t, answer{429, "2"})
			var slept sleeps
			d := testDoer(s.srv.Client(), &slept)
			d.MaxAttempts = 12 // enough refusals to reach the cap
			d.Int64N = tc.pick
			res, err := get(t, context.Background(), d, s.srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			waits := slept.all()
			if len(waits) != d.MaxAttempts-1 {
				t.Fatalf("%d waits, want %d", len(waits), d.MaxAttempts-1)
			}
			for i, w := range waits {
				bound := backoffBound(d, i)
				want := 2 * time.Second
				if tc.name == "Highest" {
					want += bound - 1
				}
				if w != want || bound > d.MaxBackoff {
					t.Errorf("wait %d = %v, want %v (backoff %v, cap %v)", i, w, want, bound, d.MaxBackoff)
				}
			}
			if last := backoffBound(d, len(waits)-1); last != d.MaxBackoff {
				t.Errorf("backoff after %d refusals is %v, want the cap %v", len(waits), last, d.MaxBackoff)
			}
		})
	}
}

func TestRetryServiceUnavailable(t *testing.T) {
	s := newStub(t, answer{503, "5"}, answer{204, ""})
	var slept sleeps
	d := testDoer(s.srv.Client(), &slept)
	res, err := get(t, context.Background(), d, s.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	waits := slept.all()
	if res.StatusCode != http.StatusNoContent || s.requests.Load() != 2 || len(waits) != 1 || waits[0] < 5*time.Second {
		t.Fatalf("got %d after %d attempts, waits %v; want 204 after 2, waiting at least 5s",
			res.StatusCode, s.requests.Load(), waits)
	}
}

func TestRetryWithoutValidRetryAfterUsesBackoffAlone(t *testing.T) {
	for _, v := range []string{"", "soon", "-3", "Wed, 21 Oct 2015 07:28:00 GMT"} {
		t.Run(strings.ReplaceAll(v, " ", "_"), func(t *testing.T) {
			s := newStub(t, answer{429, v}, answer{200, ""})
			var slept sleeps
			d := testDoer(s.srv.Client(), &slept)
			res, err := get(t, context.Background(), d, s.srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			waits := slept.all()
			if res.StatusCode != http.StatusOK || len(waits) != 1 || waits[0] < 0 || waits[0] >= d.BaseBackoff {
				t.Fatalf("got %d, waits %v; want 200 after one wait in [0, %v)", res.StatusCode, waits, d.BaseBackoff)
			}
		})
	}
}

func TestRetryIsBounded(t *testing.T) {
	s := newStub(t, answer{429, "1"})
	var slept sleeps
	d := testDoer(s.srv.Client(), &slept)
	res, err := get(t, context.Background(), d, s.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	want := "answer " + strconv.Itoa(d.MaxAttempts)
	if res.StatusCode != http.StatusTooManyRequests || string(body) != want {
		t.Fatalf("got %d %q, want the last 429 (%q) with its body unread", res.StatusCode, body, want)
	}
	if n := s.requests.Load(); n != int64(d.MaxAttempts) {
		t.Fatalf("%d attempts, want %d", n, d.MaxAttempts)
	}
	if n := len(slept.all()); n != d.MaxAttempts-1 {
		t.Fatalf("%d waits, want %d", n, d.MaxAttempts-1)
	}
}

func TestRetryAfterTooLongIsHandedBack(t *testing.T) {
	s := newStub(t, answer{429, "900"}, answer{200, ""})
	var slept sleeps
	d := testDoer(s.srv.Client(), &slept)
	res, err := get(t, context.Background(), d, s.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusTooManyRequests || s.requests.Load() != 1 || len(slept.all()) != 0 {
		t.Fatalf("got %d after %d attempts; want the 429 at once", res.StatusCode, s.requests.Load())
	}
}

func TestRetryStopsWaitingWhenContextIsDone(t *testing.T) {
	// The real sleep: the point is that it gives up its wait, not that a fake does.
	s := newStub(t, answer{429, "30"})
	d := newRetryDoer(s.srv.Client())
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	res, err := get(t, ctx, d, s.srv.URL)
	if res != nil {
		res.Body.Close()
	}
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("got %v, %v; want no answer and context.Canceled", res, err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("took %v: the wait of 30s was not cut short", took)
	}
	if n := s.requests.Load(); n != 1 {
		t.Fatalf("%d attempts, want 1", n)
	}
}

func TestRetryDeadlineIsReportedAsSuch(t *testing.T) {
	s := newStub(t, answer{503, "30"})
	d := newRetryDoer(s.srv.Client())
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := get(t, ctx, d, s.srv.URL); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want context.DeadlineExceeded", err)
	}
}

func TestRetryReplaysBodyOrSendsOnce(t *testing.T) {
	var bodies []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		n := len(bodies)
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	send := func(body io.Reader) (int, []string) {
		mu.Lock()
		bodies = nil
		mu.Unlock()
		req, err := http.NewRequest(http.MethodPost, srv.URL, body)
		if err != nil {
			t.Fatal(err)
		}
		var slept sleeps
		res, err := testDoer(srv.Client(), &slept).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		mu.Lock()
		defer mu.Unlock()
		return res.StatusCode, bodies
	}

	// NewRequest sets GetBody for a strings.Reader: the body can be sent again.
	if got, bodies := send(strings.NewReader("x")); got != http.StatusOK || len(bodies) != 2 || bodies[1] != "x" {
		t.Fatalf("replayable body: got %d, bodies %q; want 200 and the body sent twice", got, bodies)
	}
	// A reader NewRequest cannot rewind: one attempt, and its answer.
	if got, bodies := send(io.MultiReader(strings.NewReader("y"))); got != http.StatusTooManyRequests || len(bodies) != 1 {
		t.Fatalf("one-shot body: got %d, bodies %q; want the 429 after one attempt", got, bodies)
	}
}
