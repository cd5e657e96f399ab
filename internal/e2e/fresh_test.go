package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
	"github.com/petstore/orderd/internal/service/servicetest"
)

// These tests hold the instances to reading their writes everywhere: a change acknowledged
// before a request starts is seen by that request, on every instance, with no wait.

// list sends a list request with key and, when etag is set, If-None-Match.
func (in *instance) list(t *testing.T, key, etag string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", in.url+"/v1/store/orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	return in.contract.Do(t, http.DefaultClient, req)
}

// orderJSON is how the list shows the order with id and status, less its other fields.
func orderJSON(id int64, status order.Status) []byte {
	return fmt.Appendf(nil, `"id":%d,"petId":7,"quantity":1,"shipDate":"2026-11-20T00:00:00Z","status":%q`, id, status)
}

// TestCancelOnOneIsListedAtOnceOnTheOther: 200 times, a fresh pending order is cancelled
// through a, and b lists it cancelled at its next request, and answers 200, not 304, to the
// tag it gave before the cancel.
func TestCancelOnOneIsListedAtOnceOnTheOther(t *testing.T) {
	d := newDeployment(t, redistest.Start(t), nil)
	a, b := d.instance(t, "fail"), d.instance(t, "fail")
	key := d.key(t, "rounds", order.Business)
	ship := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	for i := range int64(200) {
		id := 1000 + i
		o := order.Order{ID: id, PetID: 7, Quantity: 1, ShipDate: ship, Status: order.StatusPending}
		if _, err := servicetest.Import(context.Background(), d.admin, []order.Order{o}, nil); err != nil {
			t.Fatal(err)
		}
		res, body := b.list(t, key, "")
		if res.StatusCode != 200 || !bytes.Contains(body, orderJSON(id, order.StatusPending)) {
			t.Fatalf("round %d: b before the cancel: %d, order %d not listed pending", i, res.StatusCode, id)
		}
		before := res.Header.Get("ETag")
		if res, body := a.do(t, "DELETE", "/v1/store/orders/"+strconv.FormatInt(id, 10), key); res.StatusCode != 204 {
			t.Fatalf("round %d: cancel on a: %d %s", i, res.StatusCode, body)
		}
		res, body = b.list(t, key, before)
		if res.StatusCode != 200 || !bytes.Contains(body, orderJSON(id, order.StatusCancelled)) {
			t.Fatalf("round %d: b after the cancel, with the tag from before it: %d; want 200 listing order %d cancelled", i, res.StatusCode, id)
		}
	}
}

// TestRefilledRedisIsNotTakenForTheOldOne: Redis loses everything (FLUSHALL) and is filled
// again, so that both version counters come back to the numbers the instances last saw, with
// other data. Every instance lists the new orders at its next request, and refuses a key
// that existed only before the flush, though it had it in its cache.
func TestRefilledRedisIsNotTakenForTheOldOne(t *testing.T) {
	d := newDeployment(t, redistest.Start(t), nil)
	a, b := d.instance(t, "fail"), d.instance(t, "fail")
	old := d.key(t, "before", order.Business)
	ctx := context.Background()
	counter := func(set string) int64 {
		n, err := d.rdb.Get(ctx, "{"+d.cfg.Store.RedisPrefix+":"+set+"}:version").Int64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, in := range []*instance{a, b} {
		if res, _ := in.list(t, old, ""); res.StatusCode != 200 {
			t.Fatalf("before the flush: %d", res.StatusCode)
		}
	}
	ordersAt, keysAt := counter("orders"), counter("keys")

	if err := d.rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	ship := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	refill := order.Order{ID: 77, PetID: 7, Quantity: 1, ShipDate: ship, Status: order.StatusPending}
	for n := int64(0); n < ordersAt; n++ { // each import that changes something counts one
		refill.Quantity = int32(n + 1)
		if _, err := servicetest.Import(ctx, d.admin, []order.Order{refill}, nil); err != nil {
			t.Fatal(err)
		}
	}
	var fresh string
	for n := int64(0); n < keysAt; n++ {
		fresh = d.key(t, "after-"+strconv.FormatInt(n, 10), order.Business)
	}
	if counter("orders") != ordersAt || counter("keys") != keysAt {
		t.Fatalf("counters %d, %d; the test wants them back at %d, %d", counter("orders"), counter("keys"), ordersAt, keysAt)
	}

	want := fmt.Appendf(nil, `[{"complete":false,"id":77,"petId":7,"quantity":%d,"shipDate":"2026-11-20T00:00:00Z","status":"pending"}]`, refill.Quantity)
	for name, in := range map[string]*instance{"a": a, "b": b} {
		if res, _ := in.list(t, old, ""); res.StatusCode != 401 {
			t.Errorf("%s: the key from before the flush got %d; want 401", name, res.StatusCode)
		}
		if res, body := in.list(t, fresh, ""); res.StatusCode != 200 || !bytes.Equal(bytes.TrimSpace(body), want) {
			t.Errorf("%s after the refill: %d %s; want %s", name, res.StatusCode, body, want)
		}
	}
}

// TestHalfWrittenOrdersAreAbsent: an order that another system left with data but no
// status, or a status but no data, is not listed (the rest is), and a cancel of it answers
// 404 and changes nothing in Redis.
func TestHalfWrittenOrdersAreAbsent(t *testing.T) {
	d := newDeployment(t, redistest.Start(t), nil)
	in := d.instance(t, "fail")
	key := d.key(t, "halves", order.Business)
	ctx := context.Background()
	p := "{" + d.cfg.Store.RedisPrefix + ":orders}"
	if err := d.rdb.HSet(ctx, p+":data", "5001", `{"petId":1,"quantity":1,"shipDate":"2026-11-20T00:00:00Z","complete":false}`).Err(); err != nil {
		t.Fatal(err)
	}
	if err := d.rdb.HSet(ctx, p+":status", "5002", "pending").Err(); err != nil {
		t.Fatal(err)
	}
	d.rdb.Incr(ctx, p+":version")
	dump := func() string {
		var b bytes.Buffer
		for _, k := range []string{":data", ":status"} {
			fmt.Fprintln(&b, d.rdb.HGetAll(ctx, p+k).Val())
		}
		fmt.Fprintln(&b, d.rdb.MGet(ctx, p+":version", p+":generation").Val())
		return b.String()
	}
	before := dump()

	res, body := in.do(t, "GET", "/v1/store/orders", key)
	if res.StatusCode != 200 || bytes.Contains(body, []byte(`"id":5001`)) || bytes.Contains(body, []byte(`"id":5002`)) ||
		!bytes.Contains(body, []byte(`"id":9223372036854775807`)) {
		t.Fatalf("list: %d %s; want the whole orders but the two halves", res.StatusCode, body)
	}
	for _, id := range []string{"5001", "5002"} {
		res, body := in.do(t, "DELETE", "/v1/store/orders/"+id, key)
		if res.StatusCode != 404 || !bytes.Contains(body, []byte("order_not_found")) {
			t.Errorf("cancel %s: %d %s; want 404 order_not_found", id, res.StatusCode, body)
		}
	}
	if after := dump(); after != before {
		t.Fatalf("Redis changed:\nbefore %s\nafter  %s", before, after)
	}
}

// TestAnotherSystemsWritesAreSeenAtOnce: the writes docs/redis-layout.md tells other systems
// to make, creating an order and shipping one, are listed at the next request, and found
// by state.
func TestAnotherSystemsWritesAreSeenAtOnce(t *testing.T) {
	d := newDeployment(t, redistest.Start(t), nil)
	in := d.instance(t, "fail")
	key := d.key(t, "watcher", order.Business)
	ctx := context.Background()
	if res, _ := in.do(t, "GET", "/v1/store/orders", key); res.StatusCode != 200 {
		t.Fatalf("list: %d", res.StatusCode)
	}
	finder, err := redisstore.NewOrders(d.rdb, d.cfg.Store.RedisPrefix, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	found := func(st order.Status) bool {
		t.Helper()
		page, err := ordertest.Fresh(finder).Find(ctx, order.Filter{Statuses: []order.Status{st}}, order.PageRequest{Size: order.MaxPageSize})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Orders {
			if o.ID == 4242 {
				return true
			}
		}
		return false
	}

	// Creating an order and shipping it, with the layout's scripts as the page gives them.
	run := func(name string, args ...any) {
		t.Helper()
		src, keys := redistest.Snippet(t, name, d.cfg.Store.RedisPrefix)
		if n, err := d.rdb.Eval(ctx, src, keys, append(args, rand.Text())...).Int(); err != nil || n != 1 {
			t.Fatalf("%s: %d, %v", name, n, err)
		}
	}
	run("create", "4242", `{"petId":7,"quantity":1,"shipDate":"2026-11-20T00:00:00Z","complete":false}`)
	if _, body := in.do(t, "GET", "/v1/store/orders", key); !bytes.Contains(body, orderJSON(4242, order.StatusPending)) {
		t.Fatalf("the new order is not listed at once: %s", body)
	}
	if !found(order.StatusPending) {
		t.Fatal("the new order is not found among the pending ones")
	}
	run("ship", "4242")
	if _, body := in.do(t, "GET", "/v1/store/orders", key); !bytes.Contains(body, orderJSON(4242, order.StatusShipped)) {
		t.Fatalf("the shipment is not listed at once: %s", body)
	}
	if found(order.StatusPending) || !found(order.StatusShipped) {
		t.Fatal("the shipped order is not found among the shipped ones only")
	}
}
