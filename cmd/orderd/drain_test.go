package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/api/apitest"
)

// TestRollingRestartLosesNoRequest: two instances of `orderd serve` on one SQLite file behind
// a balancer that, as load balancers do, polls each instance's /readyz every 50 ms and sends
// only to the ready ones. Clients send requests without a pause through it while one instance
// gets SIGTERM, exits and starts again. With --shutdown-delay no request fails, every answer
// keeps the contract, and the stopped instance says it drained and exits 0. Without it (0)
// the same restart loses requests, sent to a closed listener before the balancer's next poll:
// the delay is what makes the restart clean.
func TestRollingRestartLosesNoRequest(t *testing.T) {
	t.Run("delay 2s", func(t *testing.T) {
		r := rollingRestart(t, 2*time.Second)
		if len(r.failures) > 0 {
			t.Fatalf("answered %d; %d failed, e.g. %v", r.answered, len(r.failures), r.failures[:min(5, len(r.failures))])
		}
		t.Logf("answered %d through the balancer, none failed", r.answered)
	})
	t.Run("delay 0", func(t *testing.T) {
		r := rollingRestart(t, 0)
		if len(r.failures) == 0 {
			t.Fatalf("answered %d and none failed with --shutdown-delay 0: this test cannot tell a drain from none", r.answered)
		}
		t.Logf("answered %d; %d failed, e.g. %v", r.answered, len(r.failures), r.failures[0])
	})
}

type restartResult struct {
	answered int
	failures []string
}

// rollingRestart runs the restart of TestRollingRestartLosesNoRequest with --shutdown-delay
// delay, checks what must hold whatever the delay, and returns what the clients met.
func rollingRestart(t *testing.T, delay time.Duration) restartResult {
	db := filepath.Join(t.TempDir(), "orderd.db")
	key := createKey(t, db, "--plan", "enterprise", "--per-minute", "1000000000", "--per-day", "1000000000")
	importInto(t, db, "--orders", "../../testdata/demo/orders.json")
	contract := apitest.Load(t)
	start := func(args ...string) (string, *exec.Cmd, <-chan map[string]any) {
		cmd := orderdCommand(append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db,
			"--shutdown-delay", delay.String()}, args...)...)
		base, records := startLogging(t, cmd)
		return base, cmd, records
	}
	a, aCmd, aLog := start()
	aMessages := logMessages(aLog) // read from now on, or the access log fills the buffer
	b, _, bLog := start()
	go discard(bLog)
	lb := newBalancer(t, a, b)
	lb.waitReady(t, 2)

	var mu sync.Mutex
	var r restartResult
	fail := func(format string, args ...any) {
		mu.Lock()
		r.failures = append(r.failures, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 10 * time.Second}
	paths := []string{"/v1/store/orders", "/v2/store/orders?pageSize=5", "/v2/store/orders/3"}
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest("GET", lb.URL+paths[(w+i)%len(paths)], nil)
				req.Header.Set("Authorization", "Bearer "+key)
				res, err := client.Do(req)
				if err != nil {
					fail("%s: %v", req.URL.Path, err)
					continue
				}
				body, err := io.ReadAll(res.Body)
				res.Body.Close()
				switch {
				case err != nil:
					fail("%s: %d, reading: %v", req.URL.Path, res.StatusCode, err)
				case res.StatusCode != 200:
					fail("%s: %d %s", req.URL.Path, res.StatusCode, body)
				case contract.Check(req, res, body) != nil:
					fail("%s: breaks the contract: %v", req.URL.Path, contract.Check(req, res, body))
				default:
					mu.Lock()
					r.answered++
					mu.Unlock()
				}
			}
		}()
	}
	lb.waitSent(t, a, 100)

	// A stream open on A ends cleanly when A shuts down.
	req, _ := http.NewRequest("GET", a+"/v2/store/events", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	stream, res, body := contract.OpenStream(t, http.DefaultClient, req)
	if stream == nil {
		t.Fatalf("stream: %d %s", res.StatusCode, body)
	}
	lb.waitPoll(t, a) // SIGTERM right after a probe: the balancer's longest time to notice
	if err := aCmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if delay > 0 {
		checkDraining(t, lb, a, key, contract)
	}
	stream.ReadToEnd(t)
	msgs := aMessages(t) // until A exits
	if err := aCmd.Wait(); err != nil {
		t.Fatalf("A did not exit 0 on SIGTERM: %v", err)
	}
	want := []string{"shutting down", "stopped"}
	if delay > 0 {
		want = append([]string{"draining: readiness 503"}, want...)
	}
	if got := slices.DeleteFunc(msgs, func(m string) bool { return !slices.Contains(want, m) }); !slices.Equal(got, want) {
		t.Errorf("A logged %q on SIGTERM, want %q in this order", got, want)
	}

	// A starts again on its address; the balancer sends to it once it is ready.
	a2, _, a2Log := start("--addr", strings.TrimPrefix(a, "http://"))
	go discard(a2Log)
	if a2 != a {
		t.Fatalf("A restarted on %s, not on its address %s", a2, a)
	}
	lb.waitSent(t, a, lb.sentTo(a)+100)
	close(stop)
	wg.Wait()
	lb.stop()
	if r.answered == 0 {
		t.Fatal("no request was answered")
	}
	return r
}

// checkDraining: once SIGTERM came, base's /readyz answers 503 "shutting down" while /healthz
// and the API answer as before, each answer closing its connection.
func checkDraining(t *testing.T, lb *balancer, base, key string, contract *apitest.Contract) {
	t.Helper()
	be := lb.backend(base)
	lb.await(t, time.Second, "/readyz of "+base+" answering 503 after SIGTERM", func() bool { return !be.ready.Load() })
	if status, body := get(t, base+"/readyz"); status != 503 || !strings.Contains(body, "shutting down") {
		t.Errorf("/readyz while draining: %d %s; want 503 saying shutting down", status, body)
	}
	if status, body := get(t, base+"/healthz"); status != 200 {
		t.Errorf("/healthz while draining: %d %s; want 200, or liveness probes restart the pod", status, body)
	}
	req, _ := http.NewRequest("GET", base+"/v2/store/orders/3", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, body := contract.Do(t, http.DefaultClient, req)
	if res.StatusCode != 200 || !res.Close {
		t.Errorf("a request sent straight to an instance draining: %d, Connection %q, %s; want it served, "+
			"and the connection closed so that the client connects again, to another instance", res.StatusCode, res.Header.Get("Connection"), body)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// logMessages reads records from now on and returns a function that waits until the process
// that writes them exits, and returns their messages but the access log's.
func logMessages(records <-chan map[string]any) func(*testing.T) []string {
	var msgs []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for rec := range records {
			if m, _ := rec["msg"].(string); m != "request" {
				msgs = append(msgs, m)
			}
		}
	}()
	return func(t *testing.T) []string {
		t.Helper()
		select {
		case <-done:
			return msgs
		case <-time.After(30 * time.Second):
			t.Fatal("still running 30s after SIGTERM")
			return nil
		}
	}
}

// discard reads records so that the process's log never waits on a full buffer.
func discard(records <-chan map[string]any) {
	for range records {
	}
}

// balancer is a round-robin reverse proxy over backends, as a load balancer in front of
// instances: it polls each backend's /readyz every 50 ms and sends only to the ready ones.
type balancer struct {
	*httptest.Server
	backends []*backend
	next     atomic.Uint64
	done     chan struct{}
	polling  sync.WaitGroup

	mu      sync.Mutex
	changed chan struct{} // closed, and replaced, at each poll and each request sent
}

type backend struct {
	base  string
	ready atomic.Bool
	sent  atomic.Int64
	polls atomic.Int64
}

func newBalancer(t *testing.T, bases ...string) *balancer {
	lb := &balancer{done: make(chan struct{}), changed: make(chan struct{})}
	for _, base := range bases {
		be := &backend{base: base}
		lb.backends = append(lb.backends, be)
		lb.polling.Add(1)
		go lb.poll(be)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			u, _ := url.Parse(pr.In.Header.Get("X-Backend"))
			pr.SetURL(u)
			pr.Out.Header.Del("X-Backend")
		},
		Transport: &http.Transport{MaxIdleConnsPerHost: 16},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, "balancer: "+err.Error(), http.StatusBadGateway)
		},
	}
	lb.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		be := lb.pick()
		if be == nil {
			http.Error(w, "balancer: no instance is ready", http.StatusServiceUnavailable)
			return
		}
		be.sent.Add(1)
		lb.moved()
		r.Header.Set("X-Backend", be.base)
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(lb.stop)
	return lb
}

// pick is the next ready backend in turn, or nil.
func (lb *balancer) pick() *backend {
	n, start := uint64(len(lb.backends)), lb.next.Add(1)
	for i := range n {
		if be := lb.backends[(start+i)%n]; be.ready.Load() {
			return be
		}
	}
	return nil
}

func (lb *balancer) poll(be *backend) {
	defer lb.polling.Done()
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		res, err := client.Get(be.base + "/readyz")
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		be.ready.Store(err == nil && res.StatusCode == 200)
		be.polls.Add(1)
		lb.moved()
		select {
		case <-lb.done:
			return
		case <-tick.C:
		}
	}
}

// stop ends the polls and closes the proxy; once is enough, more are nothing.
func (lb *balancer) stop() {
	select {
	case <-lb.done:
		return
	default:
	}
	close(lb.done)
	lb.polling.Wait()
	lb.Server.Close()
}

// backend is the backend at base.
func (lb *balancer) backend(base string) *backend {
	for _, be := range lb.backends {
		if be.base == base {
			return be
		}
	}
	panic("no backend " + base)
}

// sentTo is how many requests the balancer sent to base.
func (lb *balancer) sentTo(base string) int64 { return lb.backend(base).sent.Load() }

// moved wakes every await: a poll or a request changed what the balancer knows.
func (lb *balancer) moved() {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	close(lb.changed)
	lb.changed = make(chan struct{})
}

// await waits until cond holds, checking it at each change of the balancer, for at most d.
func (lb *balancer) await(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	timeout := time.After(d)
	for {
		lb.mu.Lock()
		changed := lb.changed // taken before cond: a change after it still wakes us
		lb.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("no %s within %s", what, d)
		}
	}
}

// waitPoll waits until the balancer has probed base once more.
func (lb *balancer) waitPoll(t *testing.T, base string) {
	t.Helper()
	be := lb.backend(base)
	n := be.polls.Load()
	lb.await(t, 5*time.Second, "probe of "+base, func() bool { return be.polls.Load() != n })
}

// waitReady waits until n backends are ready.
func (lb *balancer) waitReady(t *testing.T, n int) {
	t.Helper()
	lb.await(t, 10*time.Second, fmt.Sprintf("%d backends ready", n), func() bool {
		ready := 0
		for _, be := range lb.backends {
			if be.ready.Load() {
				ready++
			}
		}
		return ready >= n
	})
}

// waitSent waits until the balancer has sent n requests to base.
func (lb *balancer) waitSent(t *testing.T, base string, n int64) {
	t.Helper()
	lb.await(t, 20*time.Second, fmt.Sprintf("%d requests sent to %s", n, base), func() bool { return lb.sentTo(base) >= n })
}
