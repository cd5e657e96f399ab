package api_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/metrics"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/sqlitestore"
)

// BenchmarkChain is the whole handler, every middleware included, in process: the cost of the
// service per request without the network.
func BenchmarkChain(b *testing.B) {
	h := newHarness(b)
	key := h.addKey(b, "bench", order.Enterprise, order.Limits{PerMinute: 1 << 40, PerDay: 1 << 40})
	handler := h.srv.Config.Handler
	for _, bc := range []struct {
		name, method, path string
		authed, gzip       bool
		want               int
	}{
		{"List", "GET", "/v1/store/orders", true, false, 200},
		// The list for a client that accepts gzip, as most send it by default.
		{"ListGzip", "GET", "/v1/store/orders", true, true, 200},
		{"CancelUnknown", "DELETE", "/v1/store/orders/999999999", true, false, 404},
		{"NoKey", "GET", "/v1/store/orders", false, false, 0}, // 401, then 429 once the address's quota is spent
		// Version 2's find, its query validated in full: a page of 10 of the pending orders.
		{"FindV2", "GET", "/v2/store/orders?status=pending&pageSize=10", true, false, 200},
		{"FindV2Gzip", "GET", "/v2/store/orders?status=pending&pageSize=10", true, true, 200},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req := httptest.NewRequest(bc.method, bc.path, nil)
					if bc.authed {
						req.Header.Set("Authorization", "Bearer "+key)
					}
					if bc.gzip {
						req.Header.Set("Accept-Encoding", "gzip, deflate, br, zstd")
					}
					rec := httptest.NewRecorder()
					handler.ServeHTTP(rec, req)
					if bc.want != 0 && rec.Code != bc.want {
						b.Errorf("status %d", rec.Code)
						return
					}
				}
			})
		})
	}
}

// BenchmarkChainList100 is the List case of BenchmarkChain with a list of 100 orders, for a
// client that sends no Accept-Encoding and for one that accepts gzip (as Go's client,
// browsers and curl --compressed do).
func BenchmarkChainList100(b *testing.B) {
	db := openDB(b)
	if _, err := db.Import(context.Background(), ordertest.Many(100), nil); err != nil {
		b.Fatal(err)
	}
	// As served: the access line written as JSON (to a writer that keeps nothing), metrics on.
	h := newHarness(b, func(c *api.Config) {
		c.Orders = sqlitestore.NewOrders(db)
		c.Logger, c.AccessLog = slog.New(slog.NewJSONHandler(io.Discard, nil)), io.Discard
		c.Observer = metrics.New()
	})
	key := h.addKey(b, "bench", order.Enterprise, order.Limits{PerMinute: 1 << 40, PerDay: 1 << 40})
	handler := h.srv.Config.Handler
	first := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/v1/store/orders", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	handler.ServeHTTP(first, req)
	etag := first.Header().Get("ETag")
	for _, bc := range []struct{ name, accept, tag string }{{"plain", "", ""}, {"gzip", "gzip, deflate, br, zstd", ""}, {"notmodified", "", etag}} {
		accept, tag, want := bc.accept, bc.tag, 200
		if tag != "" {
			want = 304
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req := httptest.NewRequest("GET", "/v1/store/orders", nil)
					req.Header.Set("Authorization", "Bearer "+key)
					if accept != "" {
						req.Header.Set("Accept-Encoding", accept)
					}
					if tag != "" {
						req.Header.Set("If-None-Match", tag)
					}
					rec := httptest.NewRecorder()
					handler.ServeHTTP(rec, req)
					if rec.Code != want || (rec.Header().Get("Content-Encoding") != "") != (accept != "") {
						b.Errorf("status %d, Content-Encoding %q", rec.Code, rec.Header().Get("Content-Encoding"))
						return
					}
				}
			})
		})
	}
}

// BenchmarkChainLogged is the List case of BenchmarkChain with the access line written, as
// the service writes it (JSON, to a writer that keeps nothing): the line's own cost.
func BenchmarkChainLogged(b *testing.B) {
	h := newHarness(b, func(c *api.Config) {
		c.Logger, c.AccessLog = slog.New(slog.NewJSONHandler(io.Discard, nil)), io.Discard
	})
	key := h.addKey(b, "bench", order.Enterprise, order.Limits{PerMinute: 1 << 40, PerDay: 1 << 40})
	handler := h.srv.Config.Handler
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("GET", "/v1/store/orders", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, req)
			if rec.Code != 200 {
				b.Errorf("status %d", rec.Code)
				return
			}
		}
	})
}
