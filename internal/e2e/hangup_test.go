package e2e

import (
	"bytes"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit/ratelimittest"
	"github.com/petstore/orderd/internal/redistest"
)

// TestHungUpClientsChangeNothing: clients that send a request and then half-close or close
// their connection, many times against two instances on one Redis, are no outage: the
// memory fallback never decides, a ban made before still holds, and the shared limits are
// exact afterwards.
func TestHungUpClientsChangeNothing(t *testing.T) {
	clock := ratelimittest.NewClock(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	d := newDeployment(t, redistest.Start(t), clock.Now)
	a, b := d.instance(t, "memory"), d.instance(t, "memory")
	banned := d.key(t, "pushy", order.Free)
	busy := d.key(t, "busy", order.Business)

	for range 60 {
		a.do(t, "GET", "/v1/store/orders", banned)
	}
	for range 31 { // the first 429, 29 too early, and the 30th too-early request that bans
		a.do(t, "GET", "/v1/store/orders", banned)
	}
	if res, body := b.do(t, "GET", "/v1/store/orders", banned); !bytes.Contains(body, []byte("api_key_banned")) {
		t.Fatalf("before: %d %s; want the ban", res.StatusCode, body)
	}

	// Hang-ups: a request, then at once a half-close (the client sends nothing more) or a
	// close, through both instances, with a key and without.
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := []*instance{a, b}[i%2]
			auth := ""
			if i%4 < 2 {
				auth = "Authorization: Bearer " + busy + "\r\n"
			}
			c, err := net.Dial("tcp", in.url[len("http://"):])
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "GET /v1/store/orders HTTP/1.1\r\nHost: orderd\r\n%s\r\n", auth)
			if i%8 < 4 {
				c.(*net.TCPConn).CloseWrite()
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				c.Read(make([]byte, 1)) // until the server has answered or closed
			}
		}()
	}
	wg.Wait()

	for _, in := range []*instance{a, b} {
		if n := in.metric(t, "orderd_ratelimit_fallback_decisions_total"); n != 0 {
			t.Fatalf("the fallback made %v decisions: a hung-up client counted as an outage", n)
		}
		for _, series := range []string{
			`orderd_ratelimit_decisions_total{outcome="unavailable"}`,
			`orderd_store_errors_total{operation="listOrders"}`,
			`orderd_http_requests_total{operation="listOrders",status="500"}`,
		} {
			if n := in.metric(t, series); n != 0 {
				t.Fatalf("%s %v after hang-ups", series, n)
			}
		}
		if res, body := in.do(t, "GET", "/v1/store/orders", banned); !bytes.Contains(body, []byte("api_key_banned")) {
			t.Fatalf("after: %d %s; want the ban still", res.StatusCode, body)
		}
	}

	// A burst of a fresh free key across both instances admits exactly its minute's 60.
	fresh := d.key(t, "fresh", order.Free)
	var mu sync.Mutex
	counts := map[int]int{}
	for i := range 150 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, _ := []*instance{a, b}[i%2].do(t, "GET", "/v1/store/orders", fresh)
			mu.Lock()
			counts[res.StatusCode]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if counts[200] != 60 || counts[429] != 90 {
		t.Fatalf("statuses %v; want 60 × 200 and 90 × 429", counts)
	}
}
