package e2e

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/redistest"
)

// TestOneRoundTripPerListRequest: an admitted list request, while the orders do not change
// and the caller's key is known, costs the instance one round trip to Redis.
//
// How it counts: the instance talks to Redis through a proxy (roundTripCounter) that counts,
// on each connection, every time the client sends after Redis has answered (or sends first):
// that is one round trip, however many commands a pipeline holds and however many writes
// carry them. A second round trip in a request, on any connection, adds one. MONITOR shows
// what the round trip holds: the limiter's script (EVALSHA) and the two reads of the
// versions (MGET), and nothing else.
func TestOneRoundTripPerListRequest(t *testing.T) {
	in, proxy, key := countedInstance(t)
	wantOneRoundTripEach(t, in, proxy, key, "GET", "/v1/store/orders", 200)
}

// TestOneRoundTripPerPageAskedAgain: a v2 page asked for again while the orders do not change
// costs one round trip, counted the same way: the page comes from the instance's page cache,
// confirmed by the orders' version that the limiter's round trip reads, with no find.lua.
func TestOneRoundTripPerPageAskedAgain(t *testing.T) {
	in, proxy, key := countedInstance(t)
	wantOneRoundTripEach(t, in, proxy, key, "GET", "/v2/store/orders?pageSize=2", 200)
}

// TestOneRoundTripPerCancelThatChangesNothing: a cancel of an unknown, a shipped or a
// cancelled order, in either version, costs one round trip too, counted the same way, while
// the orders do not change: the instance answers it from what an earlier cancel.lua found at
// the orders' version that this round trip reads (redisstore's Orders.outcomes).
func TestOneRoundTripPerCancelThatChangesNothing(t *testing.T) {
	in, proxy, key := countedInstance(t)
	for _, tc := range []struct {
		name, path string
		status     int
	}{
		{"Unknown", "/v1/store/orders/4242", 404},
		{"Shipped", "/v1/store/orders/2", 409},
		{"Cancelled", "/v1/store/orders/3", 204},
		{"UnknownV2", "/v2/store/orders/4242", 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantOneRoundTripEach(t, in, proxy, key, "DELETE", tc.path, tc.status)
		})
	}
}

// countedInstance starts an instance that talks to Redis through a roundTripCounter, with a
// key of its deployment.
func countedInstance(t *testing.T) (*instance, *roundTripCounter, string) {
	t.Helper()
	srv := redistest.Start(t)
	d := newDeployment(t, srv, nil)
	proxy := countRoundTrips(t, srv.Addr)
	d.cfg.Store.RedisURL = "redis://" + proxy.addr
	// The instance's background work stays out of the counts: the log's trim (at start, then
	// every minute) is off, and the webhook deliverer lists the endpoints once at start,
	// waited for below, then each Poll, an hour away.
	d.cfg.Retention = order.Retention{}
	d.cfg.Webhooks.Poll = time.Hour
	key := d.key(t, "counted", order.Business)
	conn, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("MONITOR\r\n")); err != nil {
		t.Fatal(err)
	}
	in := d.instance(t, "fail")
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for r := bufio.NewReader(conn); ; {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the instance's webhook deliverer listed no endpoints within 10 s of its start: %v", err)
		}
		if strings.Contains(strings.ToLower(l), "webhooks") {
			return in, proxy, key
		}
	}
}

// wantOneRoundTripEach sends the request twice (the key and what the request reads are then
// read once), then n times, each answered status, and checks that each of those costs one
// round trip holding the limiter's script and the two versions' reads only.
func wantOneRoundTripEach(t *testing.T, in *instance, proxy *roundTripCounter, key, method, path string, status int) {
	t.Helper()
	for range 2 {
		in.do(t, method, path, key)
	}

	stop := monitor(t, proxy.redisAddr)
	before := proxy.roundTrips.Load()
	const n = 50
	for range n {
		if res, _ := in.do(t, method, path, key); res.StatusCode != status {
			t.Fatalf("status %d; want %d", res.StatusCode, status)
		}
	}
	trips := proxy.roundTrips.Load() - before
	var fromClients []string
	for _, l := range stop() {
		if strings.Contains(l, " [") && !strings.Contains(l, " lua]") { // 1700000000.123 [0 127.0.0.1:4242] "evalsha" ...
			fromClients = append(fromClients, l)
		}
	}
	counts := map[string]int{}
	for _, l := range fromClients {
		_, cmd, _ := strings.Cut(l, `] "`)
		cmd, _, _ = strings.Cut(cmd, `"`)
		counts[strings.ToLower(cmd)]++
	}
	if trips != n {
		t.Errorf("%d requests %s %s made %d round trips; want one each", n, method, path, trips)
	}
	if len(counts) != 2 || counts["evalsha"] != n || counts["mget"] != 2*n {
		t.Errorf("%d requests %s %s sent %v; want each the limiter's script and the two versions' reads:\n%s",
			n, method, path, counts, strings.Join(fromClients[:min(10, len(fromClients))], "\n"))
	}
}

// roundTripCounter is a TCP proxy to Redis that counts round trips (see
// TestOneRoundTripPerListRequest).
type roundTripCounter struct {
	addr       string // the proxy's
	redisAddr  string // Redis's
	roundTrips atomic.Int64
}

func countRoundTrips(t *testing.T, redisAddr string) *roundTripCounter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &roundTripCounter{addr: ln.Addr().String(), redisAddr: redisAddr}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", redisAddr)
			if err != nil {
				client.Close()
				continue
			}
			var answered atomic.Bool // Redis has answered since the client last sent
			answered.Store(true)
			wg.Add(2)
			go func() { // client to Redis
				defer wg.Done()
				defer server.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := client.Read(buf)
					if n > 0 {
						if answered.Swap(false) {
							p.roundTrips.Add(1)
						}
						if _, werr := server.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
			go func() { // Redis to client
				defer wg.Done()
				defer client.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := server.Read(buf)
					if n > 0 {
						answered.Store(true)
						if _, werr := client.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return p
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
