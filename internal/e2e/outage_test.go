package e2e

import (
	"bytes"
	"context"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/redistest"
)

// TestRedisOutage: while Redis is frozen or gone, data operations answer 503 with
// Retry-After, quickly and within the contract; when it is back, everything works again
// without a restart, and no order is lost or changed.
func TestRedisOutage(t *testing.T) {
	srv := redistest.StartPersistent(t)
	d := newDeployment(t, srv, nil)
	d.cfg.Store.RedisTimeout = 500 * time.Millisecond
	in := d.instance(t, "memory")
	strict := d.instance(t, "fail")
	key := d.key(t, "steady", order.Business)

	if res, _ := in.do(t, "DELETE", "/v1/store/orders/1", key); res.StatusCode != 204 {
		t.Fatalf("cancel before the outage: %d", res.StatusCode)
	}

	// A steady load runs through the whole test, outages included: every answer must be a
	// 200 or a 503 within the contract, and no request may fail or hang. Its key's limits
	// are out of its reach: a failure to reach Redis is answered at once (nothing is sent
	// twice, see redisstore.Open), so the load sends more than a plan's minute while Redis
	// is out, which the memory fallback would rightly answer 429.
	loadKey, loadRec, err := order.NewKey("load", order.Enterprise, order.Limits{PerMinute: 1_000_000_000, PerDay: 1_000_000_000}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := d.admin.Keys.Add(context.Background(), loadRec); err != nil {
		t.Fatal(err)
	}
	loadCtx, stopLoad := context.WithCancel(context.Background())
	var loadWG sync.WaitGroup
	var loadMu sync.Mutex
	loadStatuses := map[int]int{}
	for range 4 {
		loadWG.Add(1)
		go func() {
			defer loadWG.Done()
			for loadCtx.Err() == nil {
				res, _ := in.do(t, "GET", "/v1/store/orders", loadKey)
				loadMu.Lock()
				loadStatuses[res.StatusCode]++
				loadMu.Unlock()
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	defer func() {
		stopLoad()
		loadWG.Wait()
		loadMu.Lock()
		defer loadMu.Unlock()
		if len(loadStatuses) != 2 || loadStatuses[200] == 0 || loadStatuses[503] == 0 {
			t.Errorf("statuses under load %v; want only 200s and, during the outages, 503s", loadStatuses)
		}
	}()
	_, before := in.do(t, "GET", "/v1/store/orders", key)
	orders, _ := ordertest.Fresh(d.admin.Orders).List(context.Background())

	expectUnavailable := func(t *testing.T, in *instance) {
		t.Helper()
		// At once: no request answers from what an instance learned before it.
		for _, r := range []struct{ method, path string }{
			{"GET", "/v1/store/orders"}, {"DELETE", "/v1/store/orders/3"}, {"GET", "/v1/pets/1"},
		} {
			start := time.Now()
			res, body := in.do(t, r.method, r.path, key)
			if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" ||
				!bytes.Contains(body, []byte("service_unavailable")) {
				t.Fatalf("%s %s during the outage: %d %s", r.method, r.path, res.StatusCode, body)
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Fatalf("%s %s took %v: a request must not hang on Redis", r.method, r.path, took)
			}
		}
		if res, _ := in.do(t, "GET", "/readyz", ""); res.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("/readyz during the outage: %d", res.StatusCode)
		}
	}
	expectRecovered := func(t *testing.T) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			res, body := in.do(t, "GET", "/v1/store/orders", key)
			if res.StatusCode == 200 {
				if !bytes.Equal(body, before) {
					t.Fatalf("the orders changed across the outage:\nbefore %s\nafter  %s", before, body)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not recovered: %d", res.StatusCode)
			}
			time.Sleep(100 * time.Millisecond)
		}
		after, err := ordertest.Fresh(d.admin.Orders).List(context.Background())
		if err != nil || !reflect.DeepEqual(after, orders) {
			t.Fatalf("orders in Redis changed: %v", err)
		}
		// Readiness follows by itself: the probe may meet a pooled connection of the killed
		// server, or go-redis's pause before it dials again after failed dials (about a
		// second), just after a request that got a fresh one.
		for {
			res, _ := in.do(t, "GET", "/readyz", "")
			if res.StatusCode == 200 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("/readyz after recovery: %d", res.StatusCode)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	t.Run("Frozen", func(t *testing.T) {
		srv.Pause(t)
		expectUnavailable(t, in)
		expectUnavailable(t, strict)
		srv.Resume(t)
		expectRecovered(t)
	})
	t.Run("KilledAndRestarted", func(t *testing.T) {
		srv.Stop()
		expectUnavailable(t, in)
		expectUnavailable(t, strict)
		srv.Restart(t)
		expectRecovered(t)
	})
}
