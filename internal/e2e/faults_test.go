package e2e

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/redistest"
)

// TestRedisErrorReplies: a Redis that answers but cannot do the work (out of memory, busy
// with a script, a read-only replica, a user without the permissions) is an outage, like one
// that does not answer: every /v1 answer is a 503 with Retry-After and the rate-limit
// headers (or, with the memory fallback, an honest local decision), never a 500, and
// /readyz answers 503.
func TestRedisErrorReplies(t *testing.T) {
	faults := []struct {
		name string
		// apply makes srv refuse the work and returns the URL the instances use.
		apply func(t *testing.T, srv *redistest.Server) string
		// readsWork: the fault refuses writes only, so the key is found and the limiter is
		// the first step that fails.
		readsWork bool
	}{
		{"OOM", func(t *testing.T, srv *redistest.Server) string {
			srv.MustDo(t, "CONFIG", "SET", "maxmemory-policy", "noeviction")
			srv.MustDo(t, "CONFIG", "SET", "maxmemory", "1")
			return srv.URL()
		}, true},
		{"BUSY", func(t *testing.T, srv *redistest.Server) string {
			srv.Busy(t)
			return srv.URL()
		}, false},
		{"READONLY", func(t *testing.T, srv *redistest.Server) string {
			return redistest.StartReplica(t, srv).URL() // the old primary after a failover
		}, true},
		{"NOPERM", func(t *testing.T, srv *redistest.Server) string {
			srv.User(t, "reader", "secret", "~*", "+@all", "-@scripting")
			return "redis://reader:secret@" + srv.Addr
		}, true},
	}
	for _, f := range faults {
		for _, fallback := range []string{"fail", "memory"} {
			t.Run(f.name+"/"+string(fallback), func(t *testing.T) {
				srv := redistest.Start(t)
				d := newDeployment(t, srv, nil)
				key := d.key(t, "shop", order.Pro)
				d.cfg.Store.RedisURL = f.apply(t, srv)
				in := d.instance(t, fallback)

				for _, r := range []struct{ method, path, key string }{
					{"GET", "/v1/store/orders", key},
					{"DELETE", "/v1/store/orders/1", key}, // a pending order: the cancel writes
					{"GET", "/v1/pets/1", key},
					{"GET", "/v1/store/orders", ""},
				} {
					res, body := in.do(t, r.method, r.path, r.key)
					what := r.method + " " + r.path
					if r.key == "" {
						what += " without a key"
					}
					for _, name := range apitest.RateLimitHeaders {
						if res.Header.Get(name) == "" {
							t.Errorf("%s: %d without %s", what, res.StatusCode, name)
						}
					}
					unavailable := res.StatusCode == http.StatusServiceUnavailable
					if unavailable && (res.Header.Get("Retry-After") == "" || !bytes.Contains(body, []byte("service_unavailable"))) {
						t.Errorf("%s: 503 %s, Retry-After %q", what, body, res.Header.Get("Retry-After"))
					}
					switch {
					case fallback == "fail":
						// Nothing decides: a 503 whose headers name the caller's own plan when
						// its key was found, and claim no quota spent.
						if !unavailable {
							t.Fatalf("%s: %d %s; want 503", what, res.StatusCode, body)
						}
						limit := res.Header.Get("X-RateLimit-Limit")
						if r.key != "" && f.readsWork && limit != "300" {
							t.Errorf("%s: X-RateLimit-Limit %s, want the pro plan's 300", what, limit)
						}
						if res.Header.Get("X-RateLimit-Remaining") != limit {
							t.Errorf("%s: Remaining %s of %s: no quota may be claimed spent", what, res.Header.Get("X-RateLimit-Remaining"), limit)
						}
					case r.key == "":
						// The instance decides on its own, and the request has no key.
						if res.StatusCode != http.StatusUnauthorized {
							t.Errorf("%s: %d %s; want the local decision's 401", what, res.StatusCode, body)
						}
					case r.method == "DELETE" || !f.readsWork:
						// The store refuses the cancel's write, or the key cannot be read.
						if !unavailable {
							t.Errorf("%s: %d %s; want 503", what, res.StatusCode, body)
						}
					default:
						// A local decision, then a read: whether Redis serves it depends on
						// the fault (a transaction of reads is refused out of memory).
						if res.StatusCode >= 500 && !unavailable {
							t.Errorf("%s: %d %s", what, res.StatusCode, body)
						}
					}
				}
				if fallback == "memory" && in.metric(t, "orderd_ratelimit_fallback_decisions_total") == 0 {
					t.Error("the memory fallback made no decision")
				}
				res, _ := in.do(t, "GET", "/readyz", "")
				if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
					t.Fatalf("/readyz: %d, Retry-After %q; want 503", res.StatusCode, res.Header.Get("Retry-After"))
				}
			})
		}
	}
}
