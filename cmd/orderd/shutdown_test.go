package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestShutdownFinishesRequestsInFlight: when SIGTERM comes (run's context ends), requests the
// server is answering get their whole answer, and new connections are refused.
func TestShutdownFinishesRequestsInFlight(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "orderd.db")
	key := createKey(t, db, "--plan", "business")
	const n = 20_000 // about 2 MB of JSON: more than the socket buffers hold
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":%d,"petId":%d,"quantity":1,"shipDate":"2026-11-20T08:30:00Z","complete":false,"status":"pending"}`, i, i)
	}
	b.WriteString("]")
	ordersFile := filepath.Join(dir, "orders.json")
	if err := os.WriteFile(ordersFile, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	importInto(t, db, "--orders", ordersFile)
	base, stop := serveInBackground(t, "--db", db)

	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true}}
	const inFlight = 8
	var responses []*http.Response
	for range inFlight {
		req, _ := http.NewRequest("GET", base+"/v1/store/orders", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := client.Do(req) // returns with the headers: the server is answering
		if err != nil {
			t.Fatal(err)
		}
		responses = append(responses, res)
	}

	t0 := time.Now()
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	deadline := time.Now().Add(5 * time.Second)
	for { // the listener closes at once
		res, err := http.Get(base + "/healthz")
		if err != nil {
			break
		}
		res.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("still accepting connections 5s after shutdown began")
		}
		time.Sleep(10 * time.Millisecond)
	}

	t.Logf("listener closed after %v", time.Since(t0))
	var wg sync.WaitGroup
	for i, res := range responses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer res.Body.Close()
			var list []json.RawMessage
			if err := json.NewDecoder(slowReader{res.Body}).Decode(&list); err != nil || len(list) != n {
				t.Errorf("request %d: %d orders, %v; want all %d", i, len(list), err, n)
			}
		}()
	}
	wg.Wait()
	t.Logf("bodies read after %v", time.Since(t0))
	if err := <-stopped; err != nil {
		t.Fatalf("serve returned %v", err)
	}
}

// slowReader reads like a slow client, so that the answers are still being written while the
// server shuts down.
type slowReader struct{ r io.Reader }

func (s slowReader) Read(p []byte) (int, error) {
	time.Sleep(time.Millisecond)
	return s.r.Read(p[:min(len(p), 32<<10)])
}

// TestShutdownUnderSteadyLoad: clients on kept-alive connections send requests without a
// pause while SIGTERM comes. Every request either gets its whole answer or is refused once
// the listener is closed: none fails half-way. Refused is ECONNREFUSED at connect, or
// ECONNRESET before any byte of an answer: a connection the kernel had completed but the
// server had not yet accepted when the listener closed is reset, and so is a request that
// meets the close of an idle connection on its way in (net/http's Transport retries that one
// on a reused connection, and its retry may then meet the first case). A reset is only
// right for a request the service never read, so each request carries an id of its own and
// the access log decides: every request the service logged got its whole answer, once, and
// no request that was refused or reset is in the log.
func TestShutdownUnderSteadyLoad(t *testing.T) {
	db := filepath.Join(t.TempDir(), "orderd.db")
	key := createKey(t, db, "--plan", "enterprise", "--per-minute", "1000000000", "--per-day", "1000000000")
	importInto(t, db, "--orders", "../../testdata/demo/orders.json")
	base, stop, logs := serveLogged(t, "--db", db)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	var mu sync.Mutex
	answered, refused := map[string]bool{}, map[string]bool{}
	var failures []string
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				id := fmt.Sprintf("load-%d-%d", w, i)
				req, _ := http.NewRequest("GET", base+"/v1/store/orders", nil)
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("X-Request-Id", id)
				res, err := client.Do(req)
				if err != nil {
					mu.Lock()
					if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
						refused[id] = true
					} else {
						failures = append(failures, err.Error())
					}
					mu.Unlock()
					return
				}
				var list []json.RawMessage
				decodeErr := json.NewDecoder(res.Body).Decode(&list)
				res.Body.Close()
				mu.Lock()
				if res.StatusCode != 200 || decodeErr != nil || len(list) != 21 {
					failures = append(failures, fmt.Sprintf("%s: status %d, %d orders, %v", id, res.StatusCode, len(list), decodeErr))
				} else {
					answered[id] = true
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	logged := map[string]int{}
	for _, l := range logs() {
		var line struct {
			Msg       string
			RequestID string `json:"request_id"`
		}
		if json.Unmarshal(l, &line) == nil && line.Msg == "request" {
			logged[line.RequestID]++
		}
	}
	for id, n := range logged {
		switch {
		case refused[id]:
			failures = append(failures, id+": refused or reset, but the service read it")
		case !answered[id]:
			failures = append(failures, id+": logged by the service, never answered whole")
		case n > 1:
			failures = append(failures, fmt.Sprintf("%s: read %d times", id, n))
		}
	}
	for id := range answered {
		if logged[id] == 0 {
			failures = append(failures, id+": answered, not in the access log")
		}
	}
	if len(failures) > 0 || len(answered) == 0 || len(refused) != 8 {
		t.Fatalf("answered %d, refused %d, failed %d: %v", len(answered), len(refused), len(failures), failures[:min(5, len(failures))])
	}
	t.Logf("answered %d, each in the access log; refused %d, none in it", len(answered), len(refused))
}

// TestSecondSignalEndsTheDrain: a second SIGINT or SIGTERM during the drain ends the process at
// once, as the signal's default does, instead of waiting out --shutdown-delay and the requests
// in flight. The signal is sent again until the process ends (at most 10 s): the first one's
// handling may still be under way when the drain's line is written.
func TestSecondSignalEndsTheDrain(t *testing.T) {
	db := filepath.Join(t.TempDir(), "orderd.db")
	createKey(t, db, "--plan", "free") // makes the file
	cmd := orderdCommand("serve", "--addr", "127.0.0.1:0", "--shutdown-delay", "1m", "--db", db)
	_, records := startLogging(t, cmd)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for rec := range records {
		if rec["msg"] == "draining: readiness 503" {
			break
		}
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	again := time.NewTicker(100 * time.Millisecond)
	defer again.Stop()
	for deadline := time.After(10 * time.Second); ; {
		cmd.Process.Signal(syscall.SIGINT)
		select {
		case err := <-exited:
			var exit *exec.ExitError
			if !errors.As(err, &exit) || !exit.Sys().(syscall.WaitStatus).Signaled() {
				t.Fatalf("orderd ended with %v; want killed by the second signal", err)
			}
			return
		case <-again.C:
		case <-deadline:
			t.Fatal("orderd still drains 10 s after a second signal")
		}
	}
}

// TestShutdownCutsAStreamItsClientDoesNotRead: a client that opens a stream from the log's
// start, with a backlog far larger than the socket buffers hold, then reads nothing, holds a
// write of its stream; SIGTERM still ends the process within --shutdown-delay and the grace
// a stream has to end (1 s, then 1 s for its last chunk), with exit status 0.
func TestShutdownCutsAStreamItsClientDoesNotRead(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "orderd.db")
	key := createKey(t, db, "--plan", "free")
	const n = 60_000 // about 12 MB of events: the socket buffers hold at most about 4 MB
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":%d,"petId":%d,"quantity":1,"shipDate":"2026-11-20T08:30:00Z","complete":false,"status":"pending"}`, i, i)
	}
	b.WriteString("]")
	ordersFile := filepath.Join(dir, "orders.json")
	if err := os.WriteFile(ordersFile, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	importInto(t, db, "--orders", ordersFile)
	const delay = time.Second
	// Without the cut, the write would wait out its 30 s deadline, past this timeout.
	base, cmd := startServing(t, orderdCommand("serve", "--addr", "127.0.0.1:0", "--db", db,
		"--shutdown-delay", delay.String(), "--shutdown-timeout", "10s"))

	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		c.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return err
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v2/store/events?after=0 HTTP/1.1\r\nHost: orderd\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n", key)
	head := make([]byte, 0, 1024) // the status and headers, then nothing more
	for !bytes.Contains(head, []byte("\r\n\r\n")) {
		var one [1]byte
		if _, err := conn.Read(one[:]); err != nil {
			t.Fatal(err)
		}
		head = append(head, one[0])
	}
	if !bytes.HasPrefix(head, []byte("HTTP/1.1 200")) {
		t.Fatalf("the stream's answer: %q", head)
	}

	t0 := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("orderd ended with %v after %v; want exit status 0", err, time.Since(t0))
		}
		if took := time.Since(t0); took > delay+4*time.Second {
			t.Fatalf("orderd took %v to stop; want --shutdown-delay (%v) and about 2 s", took, delay)
		}
		t.Logf("stopped %v after SIGTERM", time.Since(t0))
	case <-time.After(20 * time.Second):
		t.Fatal("orderd still runs 20 s after SIGTERM")
	}
}
