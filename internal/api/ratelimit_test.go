package api_test

import (
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
)

// rateHeaders are the rate-limit headers of one answer, parsed.
type rateHeaders struct {
	limit, remaining, reset int64
	ietfName                string
	ietfR, ietfT            int64
	policy                  string
	retryAfter              string
}

var ietfRateLimit = regexp.MustCompile(`^"(minute|day)";r=(\d+);t=(\d+)$`)

func parseRateHeaders(t *testing.T, res *http.Response) rateHeaders {
	t.Helper()
	num := func(name string) int64 {
		n, err := strconv.ParseInt(res.Header.Get(name), 10, 64)
		if err != nil {
			t.Fatalf("%s: %q", name, res.Header.Get(name))
		}
		return n
	}
	h := rateHeaders{
		limit: num("X-RateLimit-Limit"), remaining: num("X-RateLimit-Remaining"), reset: num("X-RateLimit-Reset"),
		policy: res.Header.Get("RateLimit-Policy"), retryAfter: res.Header.Get("Retry-After"),
	}
	m := ietfRateLimit.FindStringSubmatch(res.Header.Get("RateLimit"))
	if m == nil {
		t.Fatalf("RateLimit %q", res.Header.Get("RateLimit"))
	}
	h.ietfName = m[1]
	h.ietfR, _ = strconv.ParseInt(m[2], 10, 64)
	h.ietfT, _ = strconv.ParseInt(m[3], 10, 64)
	return h
}

// TestEveryStatusCarriesTheHeaders: one caller goes through every status the service sends;
// each answer carries the headers, they agree with each other, and Remaining counts down
// by one per request, whatever the answer.
func TestEveryStatusCarriesTheHeaders(t *testing.T) {
	h := newHarness(t)
	h.clock.Set(testStart.Add(17 * time.Second))
	minuteEnd := testStart.Add(time.Minute).Unix()
	h.authed(t, "GET", "/v1/store/orders")
	res, _ := h.authed(t, "GET", "/v1/store/orders")
	tag := res.Header.Get("ETag")
	steps := []struct {
		name, method, path string
		header             []string
		status             int
	}{
		{"200", "GET", "/v1/store/orders", nil, 200},
		{"304", "GET", "/v1/store/orders", []string{"If-None-Match", tag}, 304},
		{"204", "DELETE", "/v1/store/orders/1", nil, 204},
		{"400", "DELETE", "/v1/store/orders/x", nil, 400},
		{"404 order", "DELETE", "/v1/store/orders/4", nil, 404},
		{"404 route", "GET", "/v1/nowhere", nil, 404},
		{"405", "PUT", "/v1/store/orders", nil, 405},
		{"409", "DELETE", "/v1/store/orders/2", nil, 409},
		{"200 pets", "GET", "/v1/pets/7", nil, 200},
	}
	remaining := int64(58) // two requests made above
	for _, s := range steps {
		res, _ := h.authed(t, s.method, s.path, s.header...)
		if res.StatusCode != s.status {
			t.Fatalf("%s: got %d", s.name, res.StatusCode)
		}
		remaining--
		got := parseRateHeaders(t, res)
		want := rateHeaders{limit: 60, remaining: remaining, reset: minuteEnd, ietfName: "minute", ietfR: remaining, ietfT: 43,
			policy: `"minute";q=60;w=60, "day";q=1000;w=86400`}
		if got != want {
			t.Fatalf("%s: headers %+v, want %+v", s.name, got, want)
		}
	}
	// 401: an unknown key is counted by address, with the free plan's limits.
	res, body := h.do(t, "GET", "/v1/store/orders", "Authorization", "Bearer osk_unknown")
	wantError(t, res, body, 401, gen.ErrorCodeUnauthorized)
	if got := parseRateHeaders(t, res); got.remaining != 59 || got.limit != 60 {
		t.Fatalf("401: %+v", got)
	}
	// 429: the rest of the minute is spent, then one more.
	for remaining > 0 {
		h.authed(t, "GET", "/v1/store/orders")
		remaining--
	}
	res, body = h.authed(t, "GET", "/v1/store/orders")
	e := wantError(t, res, body, 429, gen.ErrorCodeRateLimitExceeded)
	if got := parseRateHeaders(t, res); got.remaining != 0 || got.reset != minuteEnd || got.retryAfter != "43" || got.ietfT != 43 {
		t.Fatalf("429: %+v", got)
	}
	if want := "rate limit of 60 requests per minute exceeded; retry after 43 seconds"; e.Message != want {
		t.Fatalf("429: %q, want %q", e.Message, want)
	}
	// 410: after the sunset (a new minute, so the key has room again).
	h.clock.Set(testSunset.SunsetAt)
	res, _ = h.authed(t, "GET", "/v1/pets/7")
	if res.StatusCode != 410 {
		t.Fatalf("got %d, want 410", res.StatusCode)
	}
	if got := parseRateHeaders(t, res); got.remaining != 59 || got.retryAfter != "" {
		t.Fatalf("410: %+v", got)
	}
}

// TestBurstAdmitsExactlyTheLimit: 150 concurrent requests with a fresh free key.
func TestBurstAdmitsExactlyTheLimit(t *testing.T) {
	h := newHarness(t)
	key := h.addKey(t, "burst", order.Free, order.Limits{})
	var mu sync.Mutex
	admitted, refused := 0, 0
	seen := map[int64]int{}
	var wg sync.WaitGroup
	for range 150 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, _ := h.do(t, "GET", "/v1/store/orders", "Authorization", "Bearer "+key)
			hd := parseRateHeaders(t, res)
			mu.Lock()
			defer mu.Unlock()
			switch res.StatusCode {
			case 200:
				admitted++
				seen[hd.remaining]++
			case 429:
				refused++
				if hd.retryAfter == "" || hd.remaining != 0 {
					t.Errorf("429 with Retry-After %q, Remaining %d", hd.retryAfter, hd.remaining)
				}
			default:
				t.Errorf("status %d", res.StatusCode)
			}
		}()
	}
	wg.Wait()
	if admitted != 60 || refused != 90 {
		t.Fatalf("admitted %d, refused %d; want 60 and 90", admitted, refused)
	}
	for r := int64(0); r < 60; r++ {
		if seen[r] != 1 {
			t.Fatalf("Remaining %d seen %d times among the admitted, want once", r, seen[r])
		}
	}
}

// TestEnterpriseDayLimit: a key with a day limit of 50; the 51st request is refused until
// the next UTC midnight.
func TestEnterpriseDayLimit(t *testing.T) {
	h := newHarness(t)
	key := h.addKey(t, "big", order.Enterprise, order.Limits{PerMinute: 50, PerDay: 50})
	auth := []string{"Authorization", "Bearer " + key}
	for i := 1; i <= 50; i++ {
		if res, _ := h.do(t, "GET", "/v1/store/orders", auth...); res.StatusCode != 200 {
			t.Fatalf("request %d: %d", i, res.StatusCode)
		}
	}
	h.clock.Add(5 * time.Minute) // a new minute: only the day binds
	res, body := h.do(t, "GET", "/v1/store/orders", auth...)
	wantError(t, res, body, 429, gen.ErrorCodeRateLimitExceeded)
	midnight := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	got := parseRateHeaders(t, res)
	wantRetry := strconv.FormatInt(int64(midnight.Sub(h.clock.Now()).Seconds()), 10)
	if got.reset != midnight.Unix() || got.limit != 50 || got.ietfName != "day" || got.retryAfter != wantRetry ||
		got.policy != `"minute";q=50;w=60, "day";q=50;w=86400` {
		t.Fatalf("headers %+v; want the day window ending at midnight, Retry-After %s", got, wantRetry)
	}
}

// TestBanAfterThirtyTooEarlyRequests: a key that keeps sending after its 429 is banned on the
// 30th too-early request, until the ban ends; other keys are unaffected.
func TestBanAfterThirtyTooEarlyRequests(t *testing.T) {
	h := newHarness(t)
	other := h.addKey(t, "other", order.Free, order.Limits{})
	for range 60 {
		h.authed(t, "GET", "/v1/store/orders")
	}
	res, body := h.authed(t, "GET", "/v1/store/orders") // the first 429
	wantError(t, res, body, 429, gen.ErrorCodeRateLimitExceeded)
	for i := 1; i < 30; i++ {
		h.clock.Add(time.Second)
		res, body := h.authed(t, "GET", "/v1/store/orders")
		wantError(t, res, body, 429, gen.ErrorCodeRateLimitExceeded)
	}
	h.clock.Add(time.Second)
	banEnd := h.clock.Now().Add(15 * time.Minute)
	res, body = h.authed(t, "DELETE", "/v1/store/orders/1")
	e := wantError(t, res, body, 429, gen.ErrorCodeApiKeyBanned)
	got := parseRateHeaders(t, res)
	if got.retryAfter != "900" || got.remaining != 0 || got.reset != banEnd.Unix() || got.ietfT != 900 {
		t.Fatalf("banned: %+v", got)
	}
	if want := "temporarily banned for sending requests before Retry-After had passed; retry after 900 seconds"; e.Message != want {
		t.Fatalf("banned: %q, want %q", e.Message, want)
	}
	if res, _ := h.do(t, "GET", "/v1/store/orders", "Authorization", "Bearer "+other); res.StatusCode != 200 {
		t.Fatalf("another key got %d", res.StatusCode)
	}
	h.clock.Set(banEnd.Add(-time.Second))
	res, body = h.authed(t, "GET", "/v1/store/orders")
	wantError(t, res, body, 429, gen.ErrorCodeApiKeyBanned)
	if got := parseRateHeaders(t, res); got.retryAfter != "1" {
		t.Fatalf("a second before the end: %+v", got)
	}
	h.clock.Set(banEnd)
	if res, _ := h.authed(t, "GET", "/v1/store/orders"); res.StatusCode != 200 {
		t.Fatalf("after the ban: %d", res.StatusCode)
	}
}

// TestUnauthenticatedCallersAreLimitedByAddress, and X-Forwarded-For counts only from a
// trusted proxy.
func TestUnauthenticatedCallersAreLimitedByAddress(t *testing.T) {
	h := newHarness(t)
	for i := range 60 {
		// A forged X-Forwarded-For does not make a new caller.
		res, _ := h.do(t, "GET", "/v1/store/orders", "X-Forwarded-For", "203.0.113."+strconv.Itoa(i))
		if res.StatusCode != 401 {
			t.Fatalf("request %d: %d", i, res.StatusCode)
		}
	}
	res, body := h.do(t, "GET", "/v1/store/orders", "X-Forwarded-For", "203.0.113.200")
	wantError(t, res, body, 429, gen.ErrorCodeRateLimitExceeded)
	if res, _ := h.authed(t, "GET", "/v1/store/orders"); res.StatusCode != 200 {
		t.Fatalf("a valid key from the same address got %d", res.StatusCode)
	}

	_, loopback, _ := net.ParseCIDR("127.0.0.0/8")
	behindProxy := newHarness(t, func(c *api.Config) {
		c.TrustedProxies = []*net.IPNet{loopback}
		c.Limiter = ratelimit.NewMemory(nil, ratelimit.DefaultBanPolicy)
	})
	for i := range 70 {
		res, _ := behindProxy.do(t, "GET", "/v1/store/orders", "X-Forwarded-For", "203.0.113."+strconv.Itoa(i))
		if res.StatusCode != 401 || parseRateHeaders(t, res).remaining != 59 {
			t.Fatalf("client %d behind the proxy: %d, %+v", i, res.StatusCode, parseRateHeaders(t, res))
		}
	}
}

// TestClientsBehindAProxyThatWritesPorts: a trusted proxy that writes each client's port
// (and brackets an IPv6 address) names 61 clients, 61 callers, none of them the proxy; the
// hops a client writes itself, left of its own, are still ignored.
func TestClientsBehindAProxyThatWritesPorts(t *testing.T) {
	_, loopback, _ := net.ParseCIDR("127.0.0.0/8")
	h := newHarness(t, func(c *api.Config) {
		c.TrustedProxies = []*net.IPNet{loopback}
		c.Limiter = ratelimit.NewMemory(nil, ratelimit.DefaultBanPolicy)
	})
	client := func(i int) string {
		if i%2 == 0 {
			return fmt.Sprintf("203.0.113.%d:4711", i)
		}
		return fmt.Sprintf("[2001:db8:0:%x::5]:443", i)
	}
	for i := range 61 {
		res, _ := h.do(t, "GET", "/v1/store/orders", "X-Forwarded-For", client(i))
		if res.StatusCode != 401 || parseRateHeaders(t, res).remaining != 59 {
			t.Fatalf("client %s: %d, %+v; want a caller of its own", client(i), res.StatusCode, parseRateHeaders(t, res))
		}
	}
	// Each client forges a new leftmost hop, on a line of its own; the proxy's hop counts.
	for i := range 61 {
		res, _ := h.do(t, "GET", "/v1/store/orders",
			"X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i), "X-Forwarded-For", client(i))
		if res.StatusCode != 401 || parseRateHeaders(t, res).remaining != 58 {
			t.Fatalf("client %s with a forged hop: %d, %+v; want its second request", client(i), res.StatusCode, parseRateHeaders(t, res))
		}
	}
}

// TestResetOfABanIsNotEarly: a ban that starts within a second ends within one; its Reset,
// like its Retry-After, is rounded up, so a client that waits until Reset is answered.
func TestResetOfABanIsNotEarly(t *testing.T) {
	h := newHarness(t)
	h.clock.Set(testStart.Add(250 * time.Millisecond))
	for range 61 { // 60 admitted, then the first 429
		h.authed(t, "GET", "/v1/store/orders")
	}
	for range 29 {
		h.clock.Add(time.Second)
		h.authed(t, "GET", "/v1/store/orders")
	}
	h.clock.Add(time.Second)
	banEnd := h.clock.Now().Add(15 * time.Minute) // 10:15:30.250
	res, body := h.authed(t, "GET", "/v1/store/orders")
	wantError(t, res, body, 429, gen.ErrorCodeApiKeyBanned)
	got := parseRateHeaders(t, res)
	if want := banEnd.Truncate(time.Second).Add(time.Second).Unix(); got.reset != want || got.retryAfter != "900" {
		t.Fatalf("banned: %+v; want Reset %d, the ban's end rounded up", got, want)
	}
	h.clock.Set(time.Unix(got.reset, 0))
	if res, body := h.authed(t, "GET", "/v1/store/orders"); res.StatusCode != 200 {
		t.Fatalf("at Reset: %d %s", res.StatusCode, body)
	}
}
