package e2e

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/ratelimit/ratelimittest"
	"github.com/petstore/orderd/internal/redistest"
	"github.com/petstore/orderd/internal/service/servicetest"
)

// TestBurstAcrossTwoInstances: 200 concurrent requests with a fresh free key, split across
// two instances, admit exactly 60.
//
// The instances share a clock that stands still: on the wall clock, a burst that straddles
// the edge of a minute is rightly admitted up to 60 in each minute (a burst started 400 ms
// before the edge got 83 × 200, with or without batching), which made the test fail at
// random: under -race a burst lasts 3 to 7 s of each minute's 60.
func TestBurstAcrossTwoInstances(t *testing.T) {
	clock := ratelimittest.NewClock(time.Date(2026, 11, 23, 10, 0, 30, 0, time.UTC))
	d := newDeployment(t, redistest.Start(t), clock.Now)
	a, b := d.instance(t, "fail"), d.instance(t, "fail")
	key := d.key(t, "burst", order.Free)
	var mu sync.Mutex
	counts := map[int]int{}
	remaining := map[string]int{}
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := a
			if i%2 == 1 {
				in = b
			}
			res, _ := in.do(t, "GET", "/v1/store/orders", key)
			mu.Lock()
			counts[res.StatusCode]++
			if res.StatusCode == 200 {
				remaining[res.Header.Get("X-RateLimit-Remaining")]++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if counts[200] != 60 || counts[429] != 140 {
		t.Fatalf("statuses %v; want 60 × 200 and 140 × 429", counts)
	}
	for r := range 60 {
		if remaining[strconv.Itoa(r)] != 1 {
			t.Fatalf("Remaining %d seen %d times", r, remaining[strconv.Itoa(r)])
		}
	}
}

// TestBanOnOneInstanceHoldsOnTheOther.
func TestBanOnOneInstanceHoldsOnTheOther(t *testing.T) {
	clock := ratelimittest.NewClock(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	d := newDeployment(t, redistest.Start(t), clock.Now)
	a, b := d.instance(t, "fail"), d.instance(t, "fail")
	key, other := d.key(t, "pushy", order.Free), d.key(t, "other", order.Free)
	for range 60 {
		a.do(t, "GET", "/v1/store/orders", key)
	}
	for range 30 { // the first 429, and 29 too early
		if res, _ := a.do(t, "GET", "/v1/store/orders", key); res.StatusCode != 429 {
			t.Fatalf("got %d", res.StatusCode)
		}
	}
	res, body := b.do(t, "GET", "/v1/store/orders", key) // the 30th too-early request
	if res.StatusCode != 429 || !bytes.Contains(body, []byte("api_key_banned")) {
		t.Fatalf("b: %d %s; want the ban", res.StatusCode, body)
	}
	if res, body := a.do(t, "GET", "/v1/store/orders", key); !bytes.Contains(body, []byte("api_key_banned")) || res.Header.Get("Retry-After") != "900" {
		t.Fatalf("a: %d %s Retry-After %s", res.StatusCode, body, res.Header.Get("Retry-After"))
	}
	if res, _ := b.do(t, "GET", "/v1/store/orders", other); res.StatusCode != 200 {
		t.Fatalf("another key: %d", res.StatusCode)
	}
}

// TestCancelsAcrossInstances: a cancel through one instance is listed by both at their next
// request, and a hundred concurrent cancels through both make one transition.
func TestCancelsAcrossInstances(t *testing.T) {
	d := newDeployment(t, redistest.Start(t), nil)
	a, b := d.instance(t, "fail"), d.instance(t, "fail")
	key := d.key(t, "big", order.Business)
	if res, _ := a.do(t, "DELETE", "/v1/store/orders/9223372036854775807", key); res.StatusCode != 204 {
		t.Fatalf("cancel: %d", res.StatusCode)
	}
	// Both list the change at their next request.
	cancelled := []byte(`"id":9223372036854775807,"petId":9223372036854775806,"quantity":7,"shipDate":"2026-11-20T08:30:00.123456789Z","status":"cancelled"`)
	for name, in := range map[string]*instance{"a": a, "b": b} {
		if _, body := in.do(t, "GET", "/v1/store/orders", key); !bytes.Contains(body, cancelled) {
			t.Fatalf("%s does not list the cancel at once: %s", name, body)
		}
	}

	version := func() int64 {
		v, _ := d.rdb.Get(context.Background(), "{"+d.cfg.Store.RedisPrefix+":orders}:version").Int64()
		return v
	}
	before := version()
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := a
			if i%2 == 1 {
				in = b
			}
			if res, body := in.do(t, "DELETE", "/v1/store/orders/1", key); res.StatusCode != 204 {
				t.Errorf("cancel %d: %d %s", i, res.StatusCode, body)
			}
		}()
	}
	wg.Wait()
	if got := version() - before; got != 1 {
		t.Fatalf("%d transitions, want exactly 1", got)
	}
	if res, _ := b.do(t, "DELETE", "/v1/store/orders/2", key); res.StatusCode != 409 {
		t.Fatalf("shipped: %d", res.StatusCode)
	}
}

// TestCancelAnsweredFromMemoryFollowsEveryWrite: a cancel that changes nothing is answered
// by an instance from what it found before (TestOneRoundTripPerCancelThatChangesNothing),
// but never once another writer changed the orders: an order imported after a's 404 is
// cancelled by a's next request; one then cancelled through b is "already cancelled" on a;
// and after an unrelated change a still answers what Redis holds.
func TestCancelAnsweredFromMemoryFollowsEveryWrite(t *testing.T) {
	d := newDeployment(t, redistest.Start(t), nil)
	a, b := d.instance(t, "fail"), d.instance(t, "fail")
	key := d.key(t, "retrier", order.Business)
	ctx := context.Background()
	ship := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	cancel := func(in *instance, id int64, want int) {
		t.Helper()
		if res, body := in.do(t, "DELETE", "/v1/store/orders/"+strconv.FormatInt(id, 10), key); res.StatusCode != want {
			t.Fatalf("cancel %d: %d %s; want %d", id, res.StatusCode, body, want)
		}
	}
	outcome := func(name string) float64 {
		return a.metric(t, `orderd_cancellations_total{outcome="`+name+`"}`)
	}
	imported := func(id int64) {
		t.Helper()
		o := order.Order{ID: id, PetID: 7, Quantity: 1, ShipDate: ship, Status: order.StatusPending}
		if _, err := servicetest.Import(ctx, d.admin, []order.Order{o}, nil); err != nil {
			t.Fatal(err)
		}
	}

	cancel(a, 4242, 404)
	cancel(a, 4242, 404)
	imported(4242)
	cancel(a, 4242, 204)
	if n := outcome("cancelled"); n != 1 {
		t.Fatalf("a cancelled %v orders; want the imported one", n)
	}

	cancel(a, 4343, 404)
	cancel(a, 4343, 404)
	imported(4343)
	cancel(b, 4343, 204)
	before := outcome("already_cancelled")
	cancel(a, 4343, 204)
	if n := outcome("already_cancelled") - before; n != 1 || outcome("cancelled") != 1 {
		t.Fatalf("a answered %v already cancelled, %v cancelled; want the order cancelled through b already cancelled", n, outcome("cancelled"))
	}

	cancel(a, 2, 409)
	cancel(a, 4444, 404)
	cancel(b, 1, 204) // another order: the orders' version moves
	cancel(a, 2, 409)
	cancel(a, 4444, 404)
	cancel(a, 3, 204)
	if outcome("cancelled") != 1 || outcome("shipped") != 2 || outcome("not_found") != 6 {
		t.Fatalf("a's outcomes: %v cancelled, %v shipped, %v not found; want 1, 2, 6", outcome("cancelled"), outcome("shipped"), outcome("not_found"))
	}
}

// TestRevokedKeyIsRefusedEverywhereAtOnce: the next request on every instance after a
// revocation is refused, though each had the key in its cache.
func TestRevokedKeyIsRefusedEverywhereAtOnce(t *testing.T) {
	d := newDeployment(t, redistest.Start(t), nil)
	a, b := d.instance(t, "fail"), d.instance(t, "fail")
	key := d.key(t, "leaving", order.Pro)
	for _, in := range []*instance{a, b} {
		if res, _ := in.do(t, "GET", "/v1/store/orders", key); res.StatusCode != 200 {
			t.Fatalf("before: %d", res.StatusCode)
		}
	}
	if _, err := d.admin.Keys.Revoke(context.Background(), "leaving"); err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]*instance{"a": a, "b": b} {
		if res, _ := in.do(t, "GET", "/v1/store/orders", key); res.StatusCode != 401 {
			t.Fatalf("%s: the revoked key got %d at the next request; want 401", name, res.StatusCode)
		}
	}
}

// TestARevokedOrBannedKeyLosesItsStreamsEverywhere: a stream on one instance ends within the
// recheck once its key is revoked (by the command line's stores) or banned (by requests to
// the other instance).
func TestARevokedOrBannedKeyLosesItsStreamsEverywhere(t *testing.T) {
	d := newDeployment(t, redistest.Start(t), nil)
	d.cfg.StreamRecheck = 100 * time.Millisecond
	d.cfg.Ban = ratelimit.BanPolicy{After: 1, For: time.Hour}
	a, b := d.instance(t, "fail"), d.instance(t, "fail")
	open := func(t *testing.T, key string) func() {
		t.Helper()
		req, _ := http.NewRequest("GET", b.url+"/v2/store/events", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Accept", "text/event-stream")
		s, res, body := d.contract.OpenStream(t, http.DefaultClient, req)
		if s == nil {
			t.Fatalf("stream on b: %d %s", res.StatusCode, body)
		}
		s.Next(t) // the retry hint
		return func() {
			t.Helper()
			done := make(chan struct{})
			go func() { defer close(done); s.ReadToEnd(t) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("b's stream still runs 5 s after its key was refused")
			}
		}
	}
	t.Run("Revoked", func(t *testing.T) {
		key := d.key(t, "leaving", order.Pro)
		ended := open(t, key)
		if _, err := d.admin.Keys.Revoke(context.Background(), "leaving"); err != nil {
			t.Fatal(err)
		}
		ended()
		if res, _ := b.do(t, "GET", "/v2/store/events", key); res.StatusCode != 401 {
			t.Fatalf("the revoked key on b: %d, want 401", res.StatusCode)
		}
	})
	t.Run("Banned", func(t *testing.T) {
		key := d.key(t, "flooding", order.Free)
		ended := open(t, key)
		for i := 0; ; i++ {
			if _, body := a.do(t, "GET", "/v2/store/events", key); bytes.Contains(body, []byte(`"api_key_banned"`)) {
				break
			}
			if i > 100 {
				t.Fatal("no ban on a after 100 requests")
			}
		}
		ended()
	})
}
