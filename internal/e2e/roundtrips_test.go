package e2e

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/plan"
	"github.com/petstore/orderd/internal/redistest"
	"github.com/petstore/orderd/internal/service"
)

// TestOneRoundTripPerListRequest counts, with MONITOR, the commands that reach Redis from
// clients for admitted list requests while the orders do not change: one each, the limiter's
// script (MONITOR lists the commands a script runs inside Redis apart, as "lua"). The key
// and the orders' version come from the pollers, and the list from its cache.
func TestOneRoundTripPerListRequest(t *testing.T) {
	d := newDeployment(t, redistest.Start(t), nil)
	d.cfg.Store.OrdersPoll, d.cfg.Store.KeysPoll = time.Hour, time.Hour // one poll at start, none during the count
	key := d.key(t, "counted", plan.Business)
	in := d.instance(t, service.FallbackFail)
	time.Sleep(100 * time.Millisecond)       // the first polls
	in.do(t, "GET", "/v1/store/orders", key) // the list, read once

	stop := monitor(t, d.redis.Addr)
	const n = 50
	for range n {
		if res, _ := in.do(t, "GET", "/v1/store/orders", key); res.StatusCode != 200 {
			t.Fatalf("status %d", res.StatusCode)
		}
	}
	var fromClients []string
	for _, l := range stop() {
		if strings.Contains(l, " [") && !strings.Contains(l, " lua]") { // 1700000000.123 [0 127.0.0.1:4242] "evalsha" ...
			fromClients = append(fromClients, l)
		}
	}
	evalsha := 0
	for _, l := range fromClients {
		if strings.Contains(strings.ToLower(l), `"evalsha"`) {
			evalsha++
		}
	}
	if len(fromClients) > n || evalsha != n {
		t.Fatalf("%d list requests sent %d commands (%d evalsha); want one each, the limiter's:\n%s",
			n, len(fromClients), evalsha, strings.Join(fromClients[:min(10, len(fromClients))], "\n"))
	}
}

// monitor reads Redis's MONITOR feed on a connection of its own (go-redis's Monitor is not
// race-free) until stop, which returns the lines.
func monitor(t *testing.T, addr string) func() []string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	if _, err := conn.Write([]byte("MONITOR\r\n")); err != nil {
		t.Fatal(err)
	}
	if ok, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(ok, "+OK") {
		t.Fatalf("MONITOR: %q %v", ok, err)
	}
	lines := make(chan string, 100_000)
	go func() {
		defer close(lines)
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				return
			}
			lines <- strings.TrimSpace(l)
		}
	}()
	return func() []string {
		time.Sleep(100 * time.Millisecond) // the last lines arrive
		conn.Close()
		var out []string
		for l := range lines {
			out = append(out, l)
		}
		return out
	}
}
