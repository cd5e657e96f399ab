package main

import (
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSlowClientsCannotHoldTheServer: hundreds of clients that trickle their headers a byte
// at a time neither stop others from being served nor keep their connections past the
// server's read-header timeout (5s).
func TestSlowClientsCannotHoldTheServer(t *testing.T) {
	db := filepath.Join(t.TempDir(), "orderd.db")
	key := createKey(t, db, "--plan", "business")
	importInto(t, db, "--orders", "../../testdata/demo/orders.json")
	base, stop := serveInBackground(t, "--db", db)
	defer stop()
	addr := strings.TrimPrefix(base, "http://")

	const slow = 300
	var conns []net.Conn
	for range slow {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		c.Write([]byte("GET /v1/store/orders HTTP/1.1\r\nHost: x\r\nX-Slow: "))
	}
	start := time.Now()
	var wg sync.WaitGroup
	closed := make(chan time.Duration, slow)
	for _, c := range conns {
		wg.Add(1)
		go func() { // one byte every 500ms, never finishing the headers
			defer wg.Done()
			defer c.Close()
			buf := make([]byte, 1)
			for time.Since(start) < 15*time.Second {
				if _, err := c.Write([]byte("a")); err != nil {
					break
				}
				c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
				if _, err := c.Read(buf); err == io.EOF || (err != nil && !isTimeout(err)) {
					break // the server hung up
				}
			}
			closed <- time.Since(start)
		}()
	}

	// Meanwhile, others are served at once.
	for i := range 20 {
		req, _ := http.NewRequest("GET", base+"/v1/store/orders", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		t0 := time.Now()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 || time.Since(t0) > time.Second {
			t.Fatalf("request %d among slow clients: %d after %v", i, res.StatusCode, time.Since(t0))
		}
		time.Sleep(50 * time.Millisecond)
	}
	wg.Wait()
	close(closed)
	for d := range closed {
		if d > 8*time.Second {
			t.Fatalf("a slow client kept its connection %v; want it closed at the 5s read-header timeout", d)
		}
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
