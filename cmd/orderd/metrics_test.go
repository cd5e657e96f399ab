package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMetricsOnTheirOwnAddress: with --metrics-addr, /metrics moves off the API's address.
func TestMetricsOnTheirOwnAddress(t *testing.T) {
	db := filepath.Join(t.TempDir(), "orderd.db")
	createKey(t, db, "--plan", "free")
	ctx, cancel := context.WithCancel(context.Background())
	logR, logW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--db", db},
			func(string) string { return "" }, io.Discard, logW)
		logW.Close()
	}()
	addrs := map[string]string{}
	sc := bufio.NewScanner(logR)
	for len(addrs) < 2 && sc.Scan() {
		var line struct{ Msg, Addr string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Addr != "" {
			addrs[line.Msg] = line.Addr
		}
	}
	go io.Copy(io.Discard, logR)
	get := func(url string) (int, string) {
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	get("http://" + addrs["listening"] + "/healthz")
	if code, body := get("http://" + addrs["metrics listening"] + "/metrics"); code != 200 ||
		!strings.Contains(body, `orderd_http_requests_total{operation="/healthz",status="200"} 1`) {
		t.Fatalf("metrics address: %d\n%.500s", code, body)
	}
	if code, _ := get("http://" + addrs["listening"] + "/metrics"); code != 404 {
		t.Fatalf("/metrics on the API address: %d, want 404", code)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
}
