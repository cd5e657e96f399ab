package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestShutdownFinishesRequestsInFlight: when SIGTERM comes (run's context ends), requests the
// server is answering get their whole answer, and new connections are refused.
func TestShutdownFinishesRequestsInFlight(t *testing.T) {
	dir := t.TempDir()
	keysFile := filepath.Join(dir, "keys.json")
	key := createKey(t, keysFile, "--plan", "business")
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
	base, stop := serveInBackground(t, "--keys-file", keysFile, "--orders", ordersFile)

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
