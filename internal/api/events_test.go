package api_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/genv2"
	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/sqlitestore"
)

// TestReadTheListThenFollowItsEvents: the list's Orders-Event-Id is where the changes it does
// not show begin, on v1's list (200 and 304) and v2's pages alike.
func TestReadTheListThenFollowItsEvents(t *testing.T) {
	h := newHarness(t)
	res, _ := h.authed(t, "GET", "/v1/store/orders")
	from := res.Header.Get("Orders-Event-Id")
	if res.StatusCode != 200 || from == "" {
		t.Fatalf("list: %d, Orders-Event-Id %q", res.StatusCode, from)
	}
	res, _ = h.authed(t, "GET", "/v1/store/orders", "If-None-Match", res.Header.Get("ETag"))
	if res.StatusCode != 304 || res.Header.Get("Orders-Event-Id") != from {
		t.Fatalf("304: %d, Orders-Event-Id %q, want %q", res.StatusCode, res.Header.Get("Orders-Event-Id"), from)
	}
	if res, _ := h.authed(t, "GET", "/v2/store/orders"); res.Header.Get("Orders-Event-Id") != from {
		t.Fatalf("v2 page: Orders-Event-Id %q, want %q", res.Header.Get("Orders-Event-Id"), from)
	}

	h.authed(t, "DELETE", "/v2/store/orders/1")
	page := eventPage(t, h, "/v2/store/events?after="+from)
	if len(page.Events) != 1 || page.LastEventId != page.Events[0].Id {
		t.Fatalf("events after the list: %+v, want the one cancel", page)
	}
	e := page.Events[0]
	if e.Type != genv2.OrderCancelled || e.Order.Id != 1 || e.Order.Status != genv2.OrderStatusCancelled || e.Order.PetId != 10 {
		t.Fatalf("event %+v, want order 1 cancelled", e)
	}
	// The list of the new version starts after that event.
	res, _ = h.authed(t, "GET", "/v1/store/orders")
	if got := res.Header.Get("Orders-Event-Id"); got != e.Id {
		t.Fatalf("list after the cancel: Orders-Event-Id %q, want the cancel's %q", got, e.Id)
	}
	if page := eventPage(t, h, "/v2/store/events?after="+e.Id); len(page.Events) != 0 || page.LastEventId != e.Id {
		t.Fatalf("after the newest: %+v, want an empty page at it", page)
	}
}

// TestEventPagesLinkOnWhileMoreMayFollow: a full page links to the next, with the types and
// the page size kept; the last page has no link.
func TestEventPagesLinkOnWhileMoreMayFollow(t *testing.T) {
	h := newHarness(t)
	h.authed(t, "DELETE", "/v2/store/orders/1")
	h.authed(t, "DELETE", "/v2/store/orders/0")
	res, body := h.authed(t, "GET", "/v2/store/events?type=order.cancelled&pageSize=7")
	var first genv2.EventPage
	if err := json.Unmarshal(body, &first); err != nil || res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	// The fixture's six creations, then the two cancels: the first 7 hold one cancel.
	if len(first.Events) != 1 || first.Events[0].Order.Id != 1 {
		t.Fatalf("first page %+v, want the cancel of order 1 only", first)
	}
	link := res.Header.Get("Link")
	want := `</v2/store/events?after=` + first.LastEventId + `&pageSize=7&type=order.cancelled>; rel="next"`
	if link != want {
		t.Fatalf("Link %q, want %q", link, want)
	}
	res, body = h.authed(t, "GET", strings.TrimSuffix(strings.TrimPrefix(link, "<"), `>; rel="next"`))
	var second genv2.EventPage
	if err := json.Unmarshal(body, &second); err != nil || len(second.Events) != 1 || second.Events[0].Order.Id != 0 {
		t.Fatalf("second page %s, want the cancel of order 0", body)
	}
	if res.Header.Get("Link") != "" {
		t.Fatalf("the last page links on: %q", res.Header.Get("Link"))
	}
}

// TestAnExpiredPositionIsGone: after the retention cut, 410 events_expired for every request
// that would miss an event, page and stream alike.
func TestAnExpiredPositionIsGone(t *testing.T) {
	h := newHarness(t)
	first := eventPage(t, h, "/v2/store/events?pageSize=1").LastEventId
	if _, err := h.events.Trim(context.Background(), order.Retention{MaxCount: 1}); err != nil {
		t.Fatal(err)
	}
	res, body := h.authed(t, "GET", "/v2/store/events?after="+first)
	e := wantError(t, res, body, http.StatusGone, gen.ErrorCodeEventsExpired)
	if !strings.Contains(e.Message, first) {
		t.Fatalf("message %q does not name the position", e.Message)
	}
	res, body = h.authed(t, "GET", "/v2/store/events", "Accept", "text/event-stream", "Last-Event-ID", first)
	wantError(t, res, body, http.StatusGone, gen.ErrorCodeEventsExpired)
	res, body = h.authed(t, "GET", "/v2/store/events?after=not-an-id")
	wantError(t, res, body, http.StatusBadRequest, gen.ErrorCodeInvalidRequest)
}

// TestAStreamSendsEachChangeAsItHappens: the retry hint, then the events after the position,
// then a cancel made while it waits; resuming with Last-Event-ID repeats nothing.
func TestAStreamSendsEachChangeAsItHappens(t *testing.T) {
	h := newHarness(t)
	res, _ := h.authed(t, "GET", "/v1/store/orders")
	from := res.Header.Get("Orders-Event-Id")
	h.authed(t, "DELETE", "/v2/store/orders/1")

	s := h.stream(t, "/v2/store/events?after="+from)
	if got := s.Next(t); got.Retry != "2000" {
		t.Fatalf("first message %+v, want the retry hint", got)
	}
	m := s.Next(t)
	if m.Event != "order.cancelled" || !strings.Contains(m.Data, `"id":1,`) {
		t.Fatalf("message %+v, want order 1's cancel", m)
	}
	h.authed(t, "DELETE", "/v2/store/orders/0") // while the stream waits
	// Well before the heartbeat, which reads the log too: the change itself must wake it.
	m2 := s.NextWithin(t, 5*time.Second)
	var e genv2.Event
	if err := json.Unmarshal([]byte(m2.Data), &e); err != nil || m2.ID != e.Id || string(e.Type) != m2.Event || e.Order.Id != 0 {
		t.Fatalf("message %+v (%v), want order 0's cancel", m2, err)
	}
	s.Close(t, h.contract)

	// An EventSource reconnects to the same URL with Last-Event-ID: it wins over after.
	h.authed(t, "DELETE", "/v2/store/orders/9223372036854775807")
	s = h.stream(t, "/v2/store/events?after="+from, "Last-Event-ID", m2.ID)
	s.Next(t) // retry
	if m3 := s.Next(t); !strings.Contains(m3.Data, `"id":9223372036854775807,`) {
		t.Fatalf("resumed with %+v, want the cancel made while away", m3)
	}
	s.Close(t, h.contract)
}

// TestStreamsPerKeyAreBounded: past the bound, 429 too_many_streams; a stream that ends
// frees its place; the service's closing ends every stream.
func TestStreamsPerKeyAreBounded(t *testing.T) {
	closing := make(chan struct{})
	h := newHarness(t, func(c *api.Config) { c.MaxStreamsPerKey = 2; c.Closing = closing })
	a, b := h.stream(t, "/v2/store/events"), h.stream(t, "/v2/store/events")
	a.Next(t)
	b.Next(t)
	// A JSON page is no stream: it is not bounded.
	res, _ := h.authed(t, "GET", "/v2/store/events")
	if res.StatusCode != 200 {
		t.Fatalf("a page while the streams are open: %d", res.StatusCode)
	}
	left := parseRateHeaders(t, res).remaining
	// A refused stream counts in no window, and its headers show the quota as it stands. It
	// says nothing of when to retry: a place frees when one of the key's streams ends.
	for range 3 {
		res, body := h.authed(t, "GET", "/v2/store/events", "Accept", "text/event-stream")
		wantError(t, res, body, http.StatusTooManyRequests, gen.ErrorCodeTooManyStreams)
		if got := parseRateHeaders(t, res).remaining; got != left || res.Header.Get("Retry-After") != "" {
			t.Fatalf("too_many_streams: Remaining %d, Retry-After %q; want %d and none", got, res.Header.Get("Retry-After"), left)
		}
	}
	if res, _ := h.authed(t, "GET", "/v2/store/events"); parseRateHeaders(t, res).remaining != left-1 {
		t.Fatalf("the next page: Remaining %d, want %d: the refused streams counted", parseRateHeaders(t, res).remaining, left-1)
	}
	a.Close(t, h.contract)
	// The server gives a's place back once it sees the connection gone: soon, not at once.
	var c *apitest.Stream
	for deadline := time.Now().Add(5 * time.Second); c == nil; {
		if time.Now().After(deadline) {
			t.Fatal("a closed stream's place was not given back within 5 s")
		}
		if c = h.tryStream(t, "/v2/store/events"); c == nil {
			time.Sleep(10 * time.Millisecond)
		}
	}
	c.Next(t)

	close(closing)
	for _, s := range []*apitest.Stream{b, c} {
		s.ReadToEnd(t)
	}
}

func TestAcceptNamesTheStream(t *testing.T) {
	h := newHarness(t)
	for accept, stream := range map[string]bool{
		"text/event-stream":                         true,
		"application/json, text/event-stream;q=0.5": true,
		"TEXT/EVENT-STREAM":                         true,
		"text/event-stream;q=0":                     false,
		"application/json":                          false,
		"":                                          false,
		"text/event-stream;q=0.000, application/json": false,
		// Every spelling of a zero qvalue refuses (RFC 9110 §12.4.2), as in Accept-Encoding.
		"text/event-stream;q=0.":                      false,
		"text/event-stream;q=0.0":                     false,
		"text/event-stream; Q=0.00":                   false,
		"text/event-stream;charset=utf-8;q=0.0":       false,
		"application/json, text/event-stream;q=0.001": true,
	} {
		req := h.request(t, "GET", "/v2/store/events", "Authorization", "Bearer "+h.key, "Accept", accept)
		res, err := h.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got := res.Header.Get("Content-Type")
		res.Body.Close()
		if strings.HasPrefix(got, "text/event-stream") != stream {
			t.Errorf("Accept %q: Content-Type %q, want a stream = %v", accept, got, stream)
		}
	}
}

// TestEventsVaryOnAccept: Accept picks a page or a stream, so every answer of the events
// says Vary: Accept (RFC 9110 §12.5.5), or a cache could give a page to an EventSource;
// other operations do not vary by it.
func TestEventsVaryOnAccept(t *testing.T) {
	h := newHarness(t)
	answers := map[string]*http.Response{}
	answers["page"], _ = h.authed(t, "GET", "/v2/store/events")
	answers["HEAD"], _ = h.authed(t, "HEAD", "/v2/store/events")
	answers["400"], _ = h.authed(t, "GET", "/v2/store/events?after=not-an-id")
	s, res, _ := h.contract.OpenStream(t, h.srv.Client(), h.request(t, "GET", "/v2/store/events", "Authorization", "Bearer "+h.key))
	if s == nil {
		t.Fatalf("stream: %d", res.StatusCode)
	}
	answers["stream"] = res
	for name, res := range answers {
		if vary := res.Header.Values("Vary"); !slices.Contains(vary, "Accept") || !slices.Contains(vary, "Accept-Encoding") {
			t.Errorf("%s: Vary %q, want Accept and Accept-Encoding", name, vary)
		}
	}
	s.Close(t, h.contract)
	if res, _ := h.authed(t, "GET", "/v2/store/orders"); slices.Contains(res.Header.Values("Vary"), "Accept") {
		t.Errorf("a page of orders: Vary %q, which Accept does not change", res.Header.Values("Vary"))
	}
}

func eventPage(tb testing.TB, h *harness, path string) genv2.EventPage {
	tb.Helper()
	res, body := h.authed(tb, "GET", path)
	var page genv2.EventPage
	if err := json.Unmarshal(body, &page); err != nil || res.StatusCode != 200 {
		tb.Fatalf("GET %s: %d %s", path, res.StatusCode, body)
	}
	return page
}

// stream opens a stream with the harness's key and the given headers; it ends with the test.
func (h *harness) stream(tb testing.TB, path string, header ...string) *apitest.Stream {
	tb.Helper()
	s := h.tryStream(tb, path, header...)
	if s == nil {
		tb.Fatalf("GET %s: 429, want a stream", path)
	}
	return s
}

// tryStream is stream, or nil for a 429.
func (h *harness) tryStream(tb testing.TB, path string, header ...string) *apitest.Stream {
	tb.Helper()
	req := h.request(tb, "GET", path, append([]string{"Authorization", "Bearer " + h.key}, header...)...)
	s, res, body := h.contract.OpenStream(tb, h.srv.Client(), req)
	if s == nil && res.StatusCode != http.StatusTooManyRequests {
		tb.Fatalf("GET %s: %d %s", path, res.StatusCode, body)
	}
	return s
}

// TestAHeadOfTheStreamAnswersAsItsGet: HEAD with Accept: text/event-stream answers what the
// GET would (the contract's HEAD rule): the stream's 200 and headers, without holding a place;
// 429 when the key holds all its streams; 410 for a position the log no longer keeps.
func TestAHeadOfTheStreamAnswersAsItsGet(t *testing.T) {
	h := newHarness(t, func(c *api.Config) { c.MaxStreamsPerKey = 1 })
	head := func(header ...string) (*http.Response, []byte) {
		t.Helper()
		return h.authed(t, "HEAD", "/v2/store/events", append([]string{"Accept", "text/event-stream"}, header...)...)
	}
	res, body := head()
	if res.StatusCode != 200 || len(body) != 0 {
		t.Fatalf("HEAD: %d, %d bytes", res.StatusCode, len(body))
	}
	s, get, _ := h.contract.OpenStream(t, h.srv.Client(), h.request(t, "GET", "/v2/store/events", "Authorization", "Bearer "+h.key))
	if s == nil {
		t.Fatalf("GET after the HEAD: %d; the HEAD held the key's one place", get.StatusCode)
	}
	for _, name := range []string{"Content-Type", "Cache-Control", "Content-Length", "Transfer-Encoding"} {
		if g, hd := get.Header.Values(name), res.Header.Values(name); !slices.Equal(g, hd) {
			t.Errorf("%s: GET %q, HEAD %q", name, g, hd)
		}
	}
	if g, hd := slices.Sorted(maps.Keys(get.Header)), slices.Sorted(maps.Keys(res.Header)); !slices.Equal(g, hd) {
		t.Errorf("header fields: GET %q, HEAD %q", g, hd)
	}
	if res, _ := head(); res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("HEAD while the key holds its one stream: %d, want 429 as its GET", res.StatusCode)
	}
	s.Close(t, h.contract)

	first := eventPage(t, h, "/v2/store/events?pageSize=1").LastEventId
	if _, err := h.events.Trim(context.Background(), order.Retention{MaxCount: 1}); err != nil {
		t.Fatal(err)
	}
	if res, _ := head("Last-Event-ID", first); res.StatusCode != http.StatusGone {
		t.Errorf("HEAD after a position the log no longer keeps: %d, want 410 as its GET", res.StatusCode)
	}
}

// TestARevokedOrBannedKeyLosesItsStreams: a stream ends within the recheck once its key is
// revoked, by another process on the file, or banned; a new request is then refused.
func TestARevokedOrBannedKeyLosesItsStreams(t *testing.T) {
	const recheck = 100 * time.Millisecond
	// within bounds how long a stream may outlive its key here: the recheck and the race
	// detector's slowness on a loaded machine.
	const within = 5 * time.Second
	ended := func(t *testing.T, s *apitest.Stream) {
		t.Helper()
		done := make(chan struct{})
		go func() { defer close(done); s.ReadToEnd(t) }()
		select {
		case <-done:
		case <-time.After(within):
			t.Fatalf("the stream still runs %v after its key was refused", within)
		}
	}
	t.Run("Revoked", func(t *testing.T) {
		h := newHarness(t, func(c *api.Config) { c.StreamRecheck = recheck })
		s := h.stream(t, "/v2/store/events")
		s.Next(t)
		other := sqlitestore.NewKeys(openDBAt(t, h.path))
		if _, err := other.Revoke(context.Background(), "test-free"); err != nil {
			t.Fatal(err)
		}
		ended(t, s)
		res, body := h.authed(t, "GET", "/v2/store/events", "Accept", "text/event-stream")
		wantError(t, res, body, http.StatusUnauthorized, gen.ErrorCodeUnauthorized)
	})
	t.Run("Banned", func(t *testing.T) {
		h := newHarness(t, func(c *api.Config) {
			c.StreamRecheck = recheck
			c.Limiter = ratelimit.NewMemory(c.Now, ratelimit.BanPolicy{After: 1, For: time.Hour})
		})
		s := h.stream(t, "/v2/store/events")
		s.Next(t)
		for range 59 { // the stream was the first of the minute's 60
			h.authed(t, "GET", "/v2/store/events")
		}
		res, body := h.authed(t, "GET", "/v2/store/events")
		wantError(t, res, body, http.StatusTooManyRequests, gen.ErrorCodeRateLimitExceeded)
		res, body = h.authed(t, "GET", "/v2/store/events") // too early: banned
		wantError(t, res, body, http.StatusTooManyRequests, gen.ErrorCodeApiKeyBanned)
		ended(t, s)
	})
}
