package main

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/redistest"
)

// TestEventsFollowTheOrdersAcrossInstancesAndRestarts, with the real program as operators run
// it, two instances on one store: a stream on B receives a cancel made on A; B restarts and a
// client resuming with Last-Event-ID gets the change made meanwhile, nothing lost or repeated;
// SIGTERM ends a stream cleanly and does not wait for it.
func TestEventsFollowTheOrdersAcrossInstancesAndRestarts(t *testing.T) {
	for _, mode := range []struct {
		name  string
		store func(t *testing.T) []string
	}{
		{"embedded", func(t *testing.T) []string {
			return []string{"--db", filepath.Join(t.TempDir(), "orderd.db")}
		}},
		{"redis", func(t *testing.T) []string {
			return []string{"--redis-url", redistest.Start(t).URL(), "--redis-prefix", redistest.Prefix(t)}
		}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			store := mode.store(t)
			orderdProcess(t, append([]string{"import", "--orders", "../../testdata/demo/orders.json"}, store...)...)
			key := strings.TrimSpace(first(orderdProcess(t, append([]string{"keys", "create", "--plan", "business"}, store...)...)))
			contract := apitest.Load(t)
			a, _ := serveProcess(t, store...)
			b, bCmd := serveProcess(t, store...)
			send := func(method, base, path string, header ...string) *http.Response {
				t.Helper()
				req, _ := http.NewRequest(method, base+path, nil)
				req.Header.Set("Authorization", "Bearer "+key)
				for i := 0; i+1 < len(header); i += 2 {
					req.Header.Set(header[i], header[i+1])
				}
				res, _ := contract.Do(t, http.DefaultClient, req)
				return res
			}
			stream := func(base, path string, header ...string) *apitest.Stream {
				t.Helper()
				req, _ := http.NewRequest("GET", base+path, nil)
				req.Header.Set("Authorization", "Bearer "+key)
				for i := 0; i+1 < len(header); i += 2 {
					req.Header.Set(header[i], header[i+1])
				}
				s, res, body := contract.OpenStream(t, http.DefaultClient, req)
				if s == nil {
					t.Fatalf("stream: %d %s", res.StatusCode, body)
				}
				s.Next(t) // the retry hint
				return s
			}

			from := send("GET", a, "/v1/store/orders").Header.Get("Orders-Event-Id")
			onB := stream(b, "/v2/store/events?after="+from)
			if res := send("DELETE", a, "/v1/store/orders/2"); res.StatusCode != 204 {
				t.Fatalf("cancel on A: %d", res.StatusCode)
			}
			got := onB.NextWithin(t, 5*time.Second)
			if got.Event != "order.cancelled" || !strings.Contains(got.Data, `"id":2,`) {
				t.Fatalf("B's stream got %+v, want A's cancel of order 2", got)
			}
			onB.Close(t, contract)

			// B goes away; a change is made on A meanwhile; B comes back.
			bCmd.Process.Signal(syscall.SIGTERM)
			if err := bCmd.Wait(); err != nil {
				t.Fatalf("B did not stop cleanly: %v", err)
			}
			send("DELETE", a, "/v1/store/orders/5")
			b2, b2Cmd := serveProcess(t, store...)
			resumed := stream(b2, "/v2/store/events?after="+from, "Last-Event-ID", got.ID)
			next := resumed.NextWithin(t, 5*time.Second)
			if next.Event != "order.cancelled" || !strings.Contains(next.Data, `"id":5,`) {
				t.Fatalf("resumed with %+v, want the cancel of order 5 made while B was away", next)
			}
			send("DELETE", a, "/v1/store/orders/7")
			if next := resumed.NextWithin(t, 5*time.Second); !strings.Contains(next.Data, `"id":7,`) {
				t.Fatalf("then %+v, want the cancel of order 7", next)
			}

			// A counts the events it recorded (its three cancels); B2, the stream it holds.
			for deadline := time.Now().Add(5 * time.Second); ; {
				metrics := fetchMetrics(t, a) + fetchMetrics(t, b2)
				if strings.Contains(metrics, `orderd_events_recorded_total{type="order.cancelled"} 3`+"\n") &&
					strings.Contains(metrics, "orderd_event_streams_open 1\n") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the metrics of A and B2 do not count the events and the stream:\n%s", grepLines(metrics, "orderd_event"))
				}
			}

			// The default bound: 5 streams a key on an instance, then 429 too_many_streams.
			for range 4 {
				stream(b2, "/v2/store/events")
			}
			req, _ := http.NewRequest("GET", b2+"/v2/store/events", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			if s, res, body := contract.OpenStream(t, http.DefaultClient, req); s != nil || res.StatusCode != 429 ||
				!strings.Contains(string(body), `"too_many_streams"`) {
				t.Fatalf("a sixth stream: %d %s", res.StatusCode, body)
			}

			// SIGTERM: the streams end cleanly, and the process does not wait for them.
			start := time.Now()
			b2Cmd.Process.Signal(syscall.SIGTERM)
			resumed.ReadToEnd(t)
			if err := b2Cmd.Wait(); err != nil || time.Since(start) > 10*time.Second {
				t.Fatalf("shutdown with a stream open: %v after %s", err, time.Since(start))
			}
		})
	}
}

func first(a, _ string) string { return a }

// fetchMetrics is base's /metrics.
func fetchMetrics(t *testing.T, base string) string {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return string(body)
}

// grepLines is the lines of text that contain word.
func grepLines(text, word string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
