package webhook_test

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/orderjson"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
	"github.com/petstore/orderd/internal/sqlitestore"
	"github.com/petstore/orderd/internal/webhook"
)

// world is a SQLite file with orders 1 to 20, its log and its endpoints.
type world struct {
	path   string
	db     *sqlitestore.DB
	orders *sqlitestore.Orders
	events *sqlitestore.Events
	hooks  *sqlitestore.Webhooks
}

func newWorld(t *testing.T) *world {
	t.Helper()
	path := filepath.Join(t.TempDir(), "orderd.db")
	db := openDB(t, path)
	var orders []order.Order
	for id := int64(1); id <= 20; id++ {
		orders = append(orders, order.Order{ID: id, PetID: id, Quantity: 1, ShipDate: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC), Status: order.StatusPending})
	}
	if _, err := db.Import(t.Context(), orders, nil); err != nil {
		t.Fatal(err)
	}
	return &world{path: path, db: db, orders: sqlitestore.NewOrders(db), events: sqlitestore.NewEvents(db), hooks: sqlitestore.NewWebhooks(db)}
}

func openDB(t *testing.T, path string) *sqlitestore.DB {
	t.Helper()
	db, err := sqlitestore.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func (w *world) cancel(t *testing.T, ids ...int64) {
	t.Helper()
	for _, id := range ids {
		if _, _, err := w.orders.Cancel(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
}

func (w *world) endpoint(t *testing.T, url string, types ...order.EventType) webhook.Endpoint {
	t.Helper()
	e, err := webhook.Create(t.Context(), w.hooks, w.events, url, types, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// logAfter is the log's events after position, every type.
func (w *world) logAfter(t *testing.T, position string) []order.Event {
	t.Helper()
	page, err := w.events.Events(t.Context(), order.EventQuery{After: position, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return page.Events
}

// delivery is one request the receiver got.
type delivery struct {
	header http.Header
	body   string
	from   string // the instance that sent it (testClient's header)
}

// receiver is an endpoint's server: it answers answer(n) to its n-th request (from 1), and
// fails the test if two requests are ever in flight at once.
type receiver struct {
	*httptest.Server
	got      chan delivery
	n        atomic.Int64
	inFlight atomic.Int64
}

func newReceiver(t *testing.T, answer func(n int64) int) *receiver {
	r := &receiver{got: make(chan delivery, 100)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.inFlight.Add(1) > 1 {
			t.Error("two deliveries to one endpoint at once")
		}
		defer r.inFlight.Add(-1)
		body, _ := io.ReadAll(req.Body)
		status := answer(r.n.Add(1))
		w.WriteHeader(status)
		r.got <- delivery{header: req.Header, body: string(body), from: req.Header.Get("X-Test-Instance")}
	}))
	t.Cleanup(r.Close)
	return r
}

func always(status int) func(int64) int { return func(int64) int { return status } }

// next returns the next request received.
func (r *receiver) next(t *testing.T) delivery {
	t.Helper()
	select {
	case d := <-r.got:
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery within 10 s")
		return delivery{}
	}
}

// outcomes is an Observer that passes each outcome on.
type outcomes chan string

func (o outcomes) WebhookDelivery(outcome string) { o <- outcome }
func (o outcomes) WebhookLag(time.Duration)       {}

// await returns once the n-th outcome want was told, failing on any other outcome.
func (o outcomes) await(t *testing.T, want string, n int) {
	t.Helper()
	for range n {
		select {
		case got := <-o:
			if got != want {
				t.Fatalf("outcome %q, want %q", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no outcome %q within 10 s", want)
		}
	}
}

// instance names its requests in a header, so that the receiver tells instances apart.
type instance struct{ name string }

func (i instance) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test-Instance", i.name)
	return http.DefaultTransport.RoundTrip(r)
}

// start runs a Deliverer on store until the test ends or stop is called; stop returns once
// Run has.
func start(t *testing.T, cfg webhook.Config) (stop func()) {
	t.Helper()
	if cfg.Client == nil {
		cfg.Client = webhook.NewClient(true)
	}
	cfg.Poll = 5 * time.Millisecond
	if cfg.LeaseTTL == 0 {
		cfg.LeaseTTL = 2 * time.Second
	}
	if len(cfg.Schedule.Backoff) == 0 {
		cfg.Schedule = webhook.Schedule{Backoff: []time.Duration{time.Millisecond}, GiveUpAfter: time.Hour}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		webhook.NewDeliverer(cfg).Run(ctx)
	}()
	stop = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stop)
	return stop
}

func (w *world) config(o outcomes) webhook.Config {
	c := webhook.Config{Store: w.hooks, Events: w.events}
	if o != nil {
		c.Observer = o
	}
	return c
}

// TestEveryEventOnceInOrderSigned: each endpoint gets every event of its types after its
// creation, once, in the log's order, as the API's Event, signed as the spec says.
func TestEveryEventOnceInOrderSigned(t *testing.T) {
	w := newWorld(t)
	w.cancel(t, 1) // before the endpoints: not theirs
	all, cancels := newReceiver(t, always(http.StatusOK)), newReceiver(t, always(http.StatusNoContent))
	ea := w.endpoint(t, all.URL+"/hook")
	ec := w.endpoint(t, cancels.URL, order.EventCancelled)
	from := ea.Position
	o := make(outcomes, 100)
	stop := start(t, w.config(o))

	w.cancel(t, 2, 3)
	if _, err := w.db.Import(t.Context(), []order.Order{{ID: 99, ShipDate: time.Now().UTC(), Status: order.StatusPending}}, nil); err != nil {
		t.Fatal(err)
	}
	w.cancel(t, 4, 99)
	want := w.logAfter(t, from)
	if len(want) != 5 {
		t.Fatalf("the log holds %d events after the endpoints, want 5", len(want))
	}
	verify := func(secret string) *standardwebhooks.Webhook {
		v, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	check := func(r *receiver, secret string, want []order.Event) {
		t.Helper()
		v := verify(secret)
		for _, ev := range want {
			d := r.next(t)
			if body := string(orderjson.AppendEvent(nil, ev)); d.body != body {
				t.Fatalf("body %s, want %s", d.body, body)
			}
			if d.header.Get("webhook-id") != ev.ID || d.header.Get("Content-Type") != "application/json" {
				t.Fatalf("headers %v for event %s", d.header, ev.ID)
			}
			if err := v.Verify([]byte(d.body), d.header); err != nil {
				t.Fatalf("signature of event %s: %v", ev.ID, err)
			}
		}
	}
	check(all, ea.Secret, want)
	var wantCancels []order.Event
	for _, ev := range want {
		if ev.Type == order.EventCancelled {
			wantCancels = append(wantCancels, ev)
		}
	}
	check(cancels, ec.Secret, wantCancels)
	o.await(t, "delivered", len(want)+len(wantCancels))
	stop()
	if len(all.got)+len(cancels.got) != 0 {
		t.Fatalf("%d deliveries more than the events", len(all.got)+len(cancels.got))
	}
	for _, e := range []webhook.Endpoint{ea, ec} {
		got, _ := webhook.Get(t.Context(), w.hooks, e.ID)
		if got.Position != want[len(want)-1].ID || got.Status != webhook.StatusActive || got.Attempts != 0 || got.LastStatus/100 != 2 {
			t.Fatalf("endpoint after delivery: %+v; want at %s", got.Delivery, want[len(want)-1].ID)
		}
	}
}

// TestFailuresAreRetriedUntilDelivered: a receiver that fails three times gets the event on
// the fourth attempt, and the next event after it.
func TestFailuresAreRetriedUntilDelivered(t *testing.T) {
	w := newWorld(t)
	r := newReceiver(t, func(n int64) int {
		if n <= 3 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	e := w.endpoint(t, r.URL)
	o := make(outcomes, 100)
	start(t, w.config(o))
	w.cancel(t, 5, 6)
	events := w.logAfter(t, e.Position)
	for i, id := range []string{events[0].ID, events[0].ID, events[0].ID, events[0].ID, events[1].ID} {
		if d := r.next(t); d.header.Get("webhook-id") != id {
			t.Fatalf("request %d was of event %s, want %s", i+1, d.header.Get("webhook-id"), id)
		}
	}
	o.await(t, "failed", 3)
	o.await(t, "delivered", 2)
	got, _ := webhook.Get(t.Context(), w.hooks, e.ID)
	if got.Position != events[1].ID || got.Attempts != 0 || !got.FirstFailure.IsZero() || got.LastError != "" {
		t.Fatalf("endpoint after the retries: %+v", got.Delivery)
	}
}

// TestRetriesEndInFailing: an event that fails for longer than GiveUpAfter marks the endpoint
// failing, its state kept, and nothing more is sent to it.
func TestRetriesEndInFailing(t *testing.T) {
	w := newWorld(t)
	r := newReceiver(t, always(http.StatusServiceUnavailable))
	e := w.endpoint(t, r.URL)
	o := make(outcomes, 1000)
	cfg := w.config(o)
	cfg.Schedule = webhook.Schedule{Backoff: []time.Duration{time.Millisecond}, GiveUpAfter: 20 * time.Millisecond}
	start(t, cfg)
	w.cancel(t, 7)
	for {
		o.await(t, "failed", 1)
		if got, _ := webhook.Get(t.Context(), w.hooks, e.ID); got.Status == webhook.StatusFailing {
			if got.Position != e.Position || got.Attempts < 2 || got.LastStatus != 503 || !strings.Contains(got.LastError, "gave up") {
				t.Fatalf("failing endpoint: %+v", got.Delivery)
			}
			break
		}
	}
	n := r.n.Load()
	w.cancel(t, 8)
	// The deliverer lists the endpoints every 5 ms: a failing one must stay untouched.
	if got, _ := webhook.Get(t.Context(), w.hooks, e.ID); got.Status != webhook.StatusFailing || r.n.Load() != n {
		t.Fatalf("a failing endpoint was delivered to: %+v, %d requests", got.Delivery, r.n.Load())
	}
}

// TestRetryAfterIsHonoured: a 503 with Retry-After waits that long, not the schedule's 1 ms,
// up to the schedule's longest wait.
// TestRetryAfterAsADateIsHonoured: a Retry-After given as an HTTP-date, which RFC 9110 allows
// as well as seconds, puts the next attempt at that date, not at the schedule's next wait.
func TestRetryAfterAsADateIsHonoured(t *testing.T) {
	w := newWorld(t)
	r := newReceiver(t, always(http.StatusServiceUnavailable))
	r.Config.Handler = http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Retry-After", time.Now().Add(10*time.Minute).UTC().Format(http.TimeFormat))
		rw.WriteHeader(http.StatusServiceUnavailable)
	})
	e := w.endpoint(t, r.URL)
	o := make(outcomes, 100)
	cfg := w.config(o)
	cfg.Schedule = webhook.Schedule{Backoff: []time.Duration{time.Millisecond, time.Hour}, GiveUpAfter: 2 * time.Hour}
	stop := start(t, cfg)
	w.cancel(t, 17)
	o.await(t, "failed", 1)
	stop()
	got, _ := webhook.Get(t.Context(), w.hooks, e.ID)
	// The date has whole seconds, and the attempt began a little before the answer was made.
	if wait := got.NextAttempt.Sub(got.LastAttempt); wait <= 9*time.Minute+58*time.Second || wait > 10*time.Minute+time.Second {
		t.Fatalf("next attempt %s after the last, want the Retry-After date's, about 10m0s", wait)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	w := newWorld(t)
	r := newReceiver(t, always(http.StatusServiceUnavailable))
	r.Config.Handler = http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Retry-After", "120")
		rw.WriteHeader(http.StatusServiceUnavailable)
	})
	e := w.endpoint(t, r.URL)
	o := make(outcomes, 100)
	cfg := w.config(o)
	cfg.Schedule = webhook.Schedule{Backoff: []time.Duration{time.Millisecond, time.Minute}, GiveUpAfter: time.Hour}
	stop := start(t, cfg)
	w.cancel(t, 17)
	o.await(t, "failed", 1)
	stop()
	got, _ := webhook.Get(t.Context(), w.hooks, e.ID)
	// The wait counts from the answer, which came a little after the attempt began.
	if wait := got.NextAttempt.Sub(got.LastAttempt); wait < time.Minute || wait > time.Minute+time.Second {
		t.Fatalf("next attempt %s after the last, want the schedule's longest, 1m0s", wait)
	}
}

// TestRetryWaitsCountFromTheAnswer: a receiver that answers slowly, or not before the attempt's
// timeout, is tried again the schedule's wait (or its Retry-After) after that answer or that
// timeout, not after the attempt began.
func TestRetryWaitsCountFromTheAnswer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answer   func(rw http.ResponseWriter, r *http.Request) // of the first request
		timeout  time.Duration
		backoff  time.Duration
		wantWait time.Duration // at least, from the end of the first attempt to the second
	}{
		{"slow 503 with Retry-After", func(rw http.ResponseWriter, _ *http.Request) {
			time.Sleep(1500 * time.Millisecond)
			rw.Header().Set("Retry-After", "1")
			rw.WriteHeader(http.StatusServiceUnavailable)
		}, 10 * time.Second, time.Millisecond, time.Second},
		{"timeout", func(_ http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // then the server sees the client leave
			<-r.Context().Done()
		}, 700 * time.Millisecond, time.Second, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			var mu sync.Mutex
			var firstEnded time.Time
			second := make(chan time.Time, 10)
			var n atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				if n.Add(1) > 1 {
					second <- time.Now()
					return // 200
				}
				tc.answer(rw, r)
				mu.Lock()
				firstEnded = time.Now()
				mu.Unlock()
			}))
			t.Cleanup(srv.Close)
			w.endpoint(t, srv.URL)
			cfg := w.config(nil)
			cfg.Timeout = tc.timeout
			cfg.LeaseTTL = 30 * time.Second
			cfg.Schedule = webhook.Schedule{Backoff: []time.Duration{tc.backoff, time.Minute}, GiveUpAfter: time.Hour}
			start(t, cfg)
			w.cancel(t, 3)
			select {
			case at := <-second:
				mu.Lock()
				defer mu.Unlock()
				if wait := at.Sub(firstEnded); wait < tc.wantWait-50*time.Millisecond {
					t.Fatalf("tried again %v after the first attempt ended; want at least %v", wait, tc.wantWait)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("not tried again within 15 s")
			}
		})
	}
}

// TestGoneDisables: a 410 Gone disables the endpoint at once: no retry, no next event.
func TestGoneDisables(t *testing.T) {
	w := newWorld(t)
	r := newReceiver(t, always(http.StatusGone))
	e := w.endpoint(t, r.URL)
	o := make(outcomes, 100)
	stop := start(t, w.config(o))
	w.cancel(t, 9, 10)
	r.next(t)
	o.await(t, "disabled", 1)
	stop()
	got, _ := webhook.Get(t.Context(), w.hooks, e.ID)
	if got.Status != webhook.StatusDisabled || got.Position != e.Position || got.LastStatus != 410 || r.n.Load() != 1 {
		t.Fatalf("after a 410: %+v, %d requests", got.Delivery, r.n.Load())
	}
}

// TestPrivateAddressesAreRefused: without allowPrivate the client never connects to the
// receiver on loopback; the attempt fails and says why.
func TestPrivateAddressesAreRefused(t *testing.T) {
	w := newWorld(t)
	r := newReceiver(t, always(http.StatusOK))
	e := w.endpoint(t, strings.Replace(r.URL, "127.0.0.1", "localhost", 1)) // resolved at the dial
	o := make(outcomes, 100)
	cfg := w.config(o)
	cfg.Client = webhook.NewClient(false)
	cfg.Schedule = webhook.Schedule{Backoff: []time.Duration{time.Hour}, GiveUpAfter: 2 * time.Hour} // one attempt before stop
	stop := start(t, cfg)
	w.cancel(t, 11)
	o.await(t, "failed", 1)
	stop()
	got, _ := webhook.Get(t.Context(), w.hooks, e.ID)
	if r.n.Load() != 0 || !strings.Contains(got.LastError, webhook.ErrForbiddenAddress.Error()) || got.Attempts != 1 {
		t.Fatalf("a loopback endpoint: %d requests, %+v", r.n.Load(), got.Delivery)
	}
}

// TestRedirectsAreNotFollowed: a 3xx is a failed attempt; its Location is never requested.
func TestRedirectsAreNotFollowed(t *testing.T) {
	w := newWorld(t)
	elsewhere := newReceiver(t, always(http.StatusOK))
	r := newReceiver(t, always(http.StatusOK))
	r.Config.Handler = http.RedirectHandler(elsewhere.URL, http.StatusTemporaryRedirect)
	e := w.endpoint(t, r.URL)
	o := make(outcomes, 100)
	stop := start(t, w.config(o))
	w.cancel(t, 12)
	o.await(t, "failed", 1)
	stop()
	if got, _ := webhook.Get(t.Context(), w.hooks, e.ID); elsewhere.n.Load() != 0 || got.LastStatus != 307 {
		t.Fatalf("a redirect: %d requests elsewhere, %+v", elsewhere.n.Load(), got.Delivery)
	}
}

// TestExpiredPositionMarksFailing: an endpoint whose next events the retention dropped fails,
// saying so, rather than skip them unseen.
func TestExpiredPositionMarksFailing(t *testing.T) {
	w := newWorld(t)
	r := newReceiver(t, always(http.StatusOK))
	e := w.endpoint(t, r.URL)
	w.cancel(t, 13, 14, 15)
	if _, err := w.events.Trim(t.Context(), order.Retention{MaxCount: 1}); err != nil {
		t.Fatal(err)
	}
	o := make(outcomes, 100)
	start(t, w.config(o))
	o.await(t, "failed", 1)
	got, _ := webhook.Get(t.Context(), w.hooks, e.ID)
	if got.Status != webhook.StatusFailing || !strings.Contains(got.LastError, "no longer keeps") || r.n.Load() != 0 {
		t.Fatalf("after the events were dropped: %+v, %d requests", got.Delivery, r.n.Load())
	}
}

// TestOneInstanceAtATime: two instances never deliver to one endpoint together; when the one
// delivering stops, the other carries on where it stopped, nothing lost. With the endpoints
// in the file, and in Redis (the log stays in the file: its Redis form is tested with it).
func TestOneInstanceAtATime(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) {
		w := newWorld(t)
		oneInstanceAtATime(t, w, w.hooks, func(tb testing.TB) (webhook.Store, order.EventLog) {
			db := openDB(t, w.path) // an instance of its own on the file
			return sqlitestore.NewWebhooks(db), sqlitestore.NewEvents(db)
		})
	})
	t.Run("Redis", func(t *testing.T) {
		w := newWorld(t)
		srv := redistest.Start(t)
		prefix := redistest.Prefix(t)
		hooks := func(tb testing.TB) webhook.Store {
			rdb, err := redisstore.Open(srv.URL(), time.Second)
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { rdb.Close() })
			s, err := redisstore.NewWebhooks(rdb, prefix, time.Second)
			if err != nil {
				tb.Fatal(err)
			}
			return s
		}
		oneInstanceAtATime(t, w, hooks(t), func(tb testing.TB) (webhook.Store, order.EventLog) { return hooks(tb), w.events })
	})
}

func oneInstanceAtATime(t *testing.T, w *world, store webhook.Store, instanceStores func(testing.TB) (webhook.Store, order.EventLog)) {
	r := newReceiver(t, always(http.StatusOK))
	e, err := webhook.Create(t.Context(), store, w.events, r.URL, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	stops, o := map[string]func(){}, make(outcomes, 100)
	for _, name := range []string{"a", "b"} {
		hooks, events := instanceStores(t)
		stops[name] = start(t, webhook.Config{
			Store: hooks, Events: events, Client: &http.Client{Transport: instance{name}}, Owner: name, Observer: o,
		})
	}
	w.cancel(t, 1, 2, 3)
	first := r.next(t).from
	for range 2 {
		if d := r.next(t); d.from != first {
			t.Fatalf("instance %s delivered while %s held the lease", d.from, first)
		}
	}
	o.await(t, "delivered", 3)
	stops[first]()
	w.cancel(t, 4, 5, 6)
	other := map[string]string{"a": "b", "b": "a"}[first]
	for range 3 {
		if d := r.next(t); d.from != other {
			t.Fatalf("instance %s delivered after %s stopped", d.from, first)
		}
	}
	o.await(t, "delivered", 3)
	events := w.logAfter(t, e.Position)
	stops[other]()
	if len(r.got) != 0 {
		t.Fatalf("%d deliveries more than the 6 events", len(r.got))
	}
	if got, _ := webhook.Get(t.Context(), store, e.ID); got.Position != events[5].ID {
		t.Fatalf("position %s, want %s", got.Position, events[5].ID)
	}
}

// TestAnExpiredLeaseIsTakenOver: an instance that stopped without releasing (it crashed)
// holds its endpoints until its lease expires; then another delivers them.
func TestAnExpiredLeaseIsTakenOver(t *testing.T) {
	w := newWorld(t)
	r := newReceiver(t, always(http.StatusOK))
	e := w.endpoint(t, r.URL)
	const ttl = 300 * time.Millisecond
	leased := time.Now()
	if _, err := webhook.Lease(t.Context(), w.hooks, e.ID, "crashed", ttl, leased); err != nil {
		t.Fatalf("Lease: %v", err)
	}
	expires := leased.Add(ttl) // as stored, not from when Lease returned
	start(t, w.config(nil))
	w.cancel(t, 16)
	r.next(t)
	if early := time.Until(expires); early > 0 {
		t.Fatalf("delivered %s before the crashed instance's lease expired", early)
	}
}

func TestNewEndpointChecksTheURLAndTypes(t *testing.T) {
	for _, u := range []string{"ftp://a.example/", "/relative", "https://", "https://user:pw@a.example/", "javascript:alert(1)"} {
		if _, err := webhook.NewEndpoint(u, nil, "0", time.Now()); err == nil {
			t.Errorf("NewEndpoint(%q) succeeded", u)
		}
	}
	if _, err := webhook.NewEndpoint("https://a.example/", []order.EventType{"order.deleted"}, "0", time.Now()); err == nil {
		t.Error("an unknown type was accepted")
	}
	e, err := webhook.NewEndpoint("https://a.example/", []order.EventType{order.EventShipped, order.EventCancelled, order.EventShipped}, "0", time.Now())
	if err != nil || e.Status != webhook.StatusActive || !slices.Equal(e.Types, []order.EventType{order.EventCancelled, order.EventShipped}) {
		t.Fatalf("NewEndpoint = %+v, %v", e, err)
	}
	// The secret is whsec_ and 32 random bytes (the spec asks 24 to 64), in base64.
	if key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(e.Secret, "whsec_")); err != nil || len(key) != 32 || !strings.HasPrefix(e.Secret, "whsec_") {
		t.Fatalf("secret %q: %d bytes, %v", e.Secret, len(key), err)
	}
}

// TestALapsedLeaseEndsTheDelivery: an instance that stalled past its lease does not carry on
// with what it read before it. Here another instance took the lapsed lease meanwhile, was
// answered 410 Gone, disabled the endpoint and released it; the stalled one, awake, finds the
// lease free, and must not take it as its own and post again to the disabled endpoint.
func TestALapsedLeaseEndsTheDelivery(t *testing.T) {
	w := newWorld(t)
	r := newReceiver(t, always(http.StatusGone))
	e := w.endpoint(t, r.URL)
	w.cancel(t, 1)
	const ttl = 300 * time.Millisecond
	log := &stallingLog{EventLog: w.events, stalled: make(chan struct{}), resume: make(chan struct{})}
	hooks := refusals{Store: w.hooks, refused: make(chan error, 10)}
	start(t, webhook.Config{Store: hooks, Events: log, Owner: "a", LeaseTTL: ttl,
		Client: &http.Client{Transport: instance{"a"}}})
	within(t, log.stalled, "a's first read of the log")

	o := make(outcomes, 10)
	stopB := start(t, webhook.Config{Store: w.hooks, Events: w.events, Owner: "b", LeaseTTL: ttl, Observer: o,
		Client: &http.Client{Transport: instance{"b"}}})
	if d := r.next(t); d.from != "b" {
		t.Fatalf("the first delivery came from %q, want b", d.from)
	}
	o.await(t, "disabled", 1)
	stopB()

	close(log.resume)
	within(t, hooks.refused, "a's renewal of its lapsed lease to be refused")
	select {
	case d := <-r.got:
		got, _ := webhook.Get(t.Context(), w.hooks, e.ID)
		t.Fatalf("%s posted event %s to an endpoint disabled meanwhile; its state now %+v", d.from, d.header.Get("webhook-id"), got.Delivery)
	default:
	}
}

// stallingLog is an event log whose first read blocks until resume is closed, as a process
// paused past its lease would.
type stallingLog struct {
	order.EventLog
	once            sync.Once
	stalled, resume chan struct{}
}

func (s *stallingLog) Events(ctx context.Context, q order.EventQuery) (order.EventPage, error) {
	s.once.Do(func() { close(s.stalled); <-s.resume })
	return s.EventLog.Events(ctx, q)
}

// refusals is a store that passes on each change it refused.
type refusals struct {
	webhook.Store
	refused chan error
}

func (r refusals) Update(ctx context.Context, id string, change func(*webhook.Endpoint) error) error {
	err := r.Store.Update(ctx, id, change)
	if err != nil {
		r.refused <- err
	}
	return err
}

// within waits for ch to yield or close, failing after 10 s.
func within[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("waited 10 s for %s", what)
	}
}

// TestEnableOnlyAnEndpointNotActiveAtThePositionChecked: Enable refuses an active endpoint (its
// deliverer owns its state) and one whose position moved while it read the log; it makes a
// failing or disabled one active from its position, its failure cleared, its last answer kept.
func TestEnableOnlyAnEndpointNotActiveAtThePositionChecked(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	e := w.endpoint(t, "https://a.example/hook")
	w.cancel(t, 1, 2)
	events := w.logAfter(t, e.Position)
	if _, err := webhook.Enable(ctx, w.hooks, w.events, e.ID, false); !errors.Is(err, webhook.ErrActive) {
		t.Fatalf("Enable of an active endpoint: %v", err)
	}
	save := func(d webhook.Delivery) {
		t.Helper()
		now := time.Now()
		if _, err := webhook.Lease(ctx, w.hooks, e.ID, "one", time.Minute, now); err != nil {
			t.Fatalf("Lease: %v", err)
		}
		if err := webhook.Hold(ctx, w.hooks, e.ID, "one", now, func(e *webhook.Endpoint) { e.Delivery = d }); err != nil {
			t.Fatal(err)
		}
	}
	failing := webhook.Delivery{Status: webhook.StatusFailing, Position: e.Position, Attempts: 19, FirstFailure: time.Unix(100, 0).UTC(),
		NextAttempt: time.Unix(200, 0).UTC(), LastAttempt: time.Unix(300, 0).UTC(), LastStatus: 503, LastError: "gave up"}
	save(failing)
	// While Enable reads the log, a deliverer moves the endpoint on, and it fails again.
	moved := failing
	moved.Position = events[0].ID
	log := &stallingLog{EventLog: w.events, stalled: make(chan struct{}), resume: make(chan struct{})}
	go func() { <-log.stalled; save(moved); close(log.resume) }()
	if _, err := webhook.Enable(ctx, w.hooks, log, e.ID, false); !errors.Is(err, webhook.ErrMoved) {
		t.Fatalf("Enable of an endpoint moved meanwhile: %v", err)
	}
	if got, _ := webhook.Get(ctx, w.hooks, e.ID); !reflect.DeepEqual(got.Delivery, moved) {
		t.Fatalf("a refused Enable changed the state: %+v", got.Delivery)
	}
	r, err := webhook.Enable(ctx, w.hooks, w.events, e.ID, false)
	if err != nil || r.From != moved.Position || r.To != moved.Position || r.Events != 1 {
		t.Fatalf("Enable = %+v, %v; want from and to %s, 1 event waiting", r, err, moved.Position)
	}
	want := webhook.Delivery{Status: webhook.StatusActive, Position: moved.Position, LastAttempt: moved.LastAttempt, LastStatus: 503}
	if got, _ := webhook.Get(ctx, w.hooks, e.ID); !reflect.DeepEqual(got.Delivery, want) {
		t.Fatalf("after Enable: %+v; want %+v", got.Delivery, want)
	}
	save(webhook.Delivery{Status: webhook.StatusDisabled, Position: events[1].ID, LastStatus: 410, LastError: "410 Gone"})
	if _, err := webhook.Enable(ctx, w.hooks, w.events, e.ID, false); err != nil {
		t.Fatalf("Enable of a disabled endpoint: %v", err)
	}
	if got, _ := webhook.Get(ctx, w.hooks, e.ID); got.Status != webhook.StatusActive || got.LastError != "" || got.LastStatus != 410 {
		t.Fatalf("a disabled endpoint enabled: %+v", got.Delivery)
	}
	if _, err := webhook.Enable(ctx, w.hooks, w.events, "wh_none", false); !errors.Is(err, webhook.ErrNotFound) {
		t.Fatalf("Enable of no endpoint: %v", err)
	}
}
