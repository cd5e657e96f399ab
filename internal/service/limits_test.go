package service_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/service/servicetest"
)

// TestAnonymousLimitSettings: Config.IPv6Prefix and Config.MaxAnonymousCallers reach the
// limiter: with a /48, addresses of two /64s in it share one quota; past the cap, the
// forgotten callers are counted on /metrics.
func TestAnonymousLimitSettings(t *testing.T) {
	cfg, _ := embedded(t, order.Free)
	_, loopback, _ := net.ParseCIDR("127.0.0.0/8")
	cfg.TrustedProxies = []*net.IPNet{loopback}
	cfg.IPv6Prefix = 48
	cfg.MaxAnonymousCallers = 64
	svc := servicetest.Run(t, cfg)
	ct := apitest.Load(t)
	from := func(addr string) *http.Response {
		req, _ := http.NewRequest("GET", svc.URL()+"/v1/store/orders", nil)
		req.Header.Set("X-Forwarded-For", addr)
		res, _ := ct.Do(t, http.DefaultClient, req)
		return res
	}
	for i := range 60 {
		if res := from(fmt.Sprintf("2001:db8:7:%x::1", i)); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("request %d of the /48: %d", i+1, res.StatusCode)
		}
	}
	if res := from("2001:db8:7:ffff::1"); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the 61st request of the /48: %d, want 429", res.StatusCode)
	}
	for i := range 200 {
		from(fmt.Sprintf("198.18.0.%d", i))
	}
	res, err := http.Get(svc.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "orderd_ratelimit_forgotten_callers_total "); ok {
			if v == "0" {
				t.Fatal("no caller forgotten past the cap")
			}
			return
		}
	}
	t.Fatal("no orderd_ratelimit_forgotten_callers_total")
}
