package api_test

import (
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/metrics"
	"github.com/petstore/orderd/internal/ratelimit"
)

// TestAnonymousCallersByNetwork: through a trusted proxy, callers without a key are counted
// per IPv6 /64 (and per IPv4 address): addresses of one /64 share the free plan's 60 a
// minute, another /64 has its own. Past the cap on anonymous callers the least recently seen
// are forgotten, each counted in the metric, and the limiter holds no more than the cap.
func TestAnonymousCallersByNetwork(t *testing.T) {
	const maxCallers = 64
	m := metrics.New()
	var limiter *ratelimit.Memory
	_, loopback, _ := net.ParseCIDR("127.0.0.0/8")
	h := newHarness(t, func(c *api.Config) {
		limiter = ratelimit.NewMemory(c.Now, ratelimit.DefaultBanPolicy, ratelimit.MaxAnonymous(maxCallers), ratelimit.OnForget(m.ForgottenCaller))
		c.Limiter, c.Observer, c.Metrics = limiter, m, m.Handler()
		c.TrustedProxies = []*net.IPNet{loopback}
	})
	from := func(addr string) *http.Response {
		res, _ := h.do(t, "GET", "/v1/store/orders", "X-Forwarded-For", addr)
		return res
	}

	for i := range 60 {
		if res := from(fmt.Sprintf("2001:db8:1:2:%x::%x", i, i+1)); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("request %d of the /64: %d", i+1, res.StatusCode)
		}
	}
	if res := from("2001:db8:1:2:ffff:ffff:ffff:ffff"); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the 61st request of the /64: %d, want 429", res.StatusCode)
	}
	if res := from("2001:db8:1:3::1"); res.StatusCode != http.StatusUnauthorized || res.Header.Get("X-RateLimit-Remaining") != "59" {
		t.Fatalf("another /64: %d, Remaining %s; want its own first request", res.StatusCode, res.Header.Get("X-RateLimit-Remaining"))
	}
	if res := from("192.0.2.1"); res.StatusCode != http.StatusUnauthorized || res.Header.Get("X-RateLimit-Remaining") != "59" {
		t.Fatalf("an IPv4 address: %d, Remaining %s", res.StatusCode, res.Header.Get("X-RateLimit-Remaining"))
	}
	if res := from("192.0.2.2"); res.Header.Get("X-RateLimit-Remaining") != "59" {
		t.Fatalf("the next IPv4 address: Remaining %s; want one of its own", res.Header.Get("X-RateLimit-Remaining"))
	}

	// 300 more networks: the limiter keeps at most its cap, and every caller it let go is
	// counted.
	const distinct = 2 + 2 + 300 // two /64s, two IPv4 addresses, and these
	for i := range 300 {
		from(fmt.Sprintf("198.18.%d.%d", i/256, i%256))
	}
	remembered := limiter.Len() // every caller of this test is anonymous
	if remembered > maxCallers {
		t.Fatalf("%d callers remembered, cap %d", remembered, maxCallers)
	}
	forgotten := apitest.Metric(t, h.srv.URL, "orderd_ratelimit_forgotten_callers_total")
	if int(forgotten) != distinct-remembered {
		t.Fatalf("forgotten %v, want %d (seen) - %d (remembered)", forgotten, distinct, remembered)
	}
}
