package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
)

// TestHalfWrittenOrdersAreLoggedOnce: data without a status and a status without data (or
// with an empty one, which the layout counts as none) are neither listed, found nor
// cancelled, change nothing when cancelled, and are each logged once, however many requests
// meet them.
func TestHalfWrittenOrdersAreLoggedOnce(t *testing.T) {
	rdb := client(t, redistest.Start(t))
	prefix := redistest.Prefix(t)
	s := ordersWithPrefix(t, rdb, prefix)
	var logs bytes.Buffer
	redisstore.SetLogger(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { redisstore.SetLogger(nil) })
	ctx := context.Background()
	p := "{" + prefix + ":orders}"
	rdb.HSet(ctx, p+":data", "5001", `{"petId":1,"quantity":1,"shipDate":"2026-11-20T00:00:00Z","complete":false}`)
	rdb.HSet(ctx, p+":status", "5002", "pending")
	rdb.HSet(ctx, p+":data", "5003", "")
	rdb.HSet(ctx, p+":status", "5003", "pending")
	rdb.HSet(ctx, p+":data", "5004", `{"petId":1,"quantity":1,"shipDate":"2026-11-20T00:00:00Z","complete":false}`)
	rdb.HSet(ctx, p+":status", "5004", "")
	version := rdb.Get(ctx, p+":version").Val()
	for range 3 {
		list, err := ordertest.Fresh(s).List(ctx)
		if err != nil || len(list) != len(ordertest.Fixture()) {
			t.Fatalf("List = %d orders, %v; want the fixture's %d", len(list), err, len(ordertest.Fixture()))
		}
		for _, id := range []int64{5001, 5002, 5003, 5004} {
			if _, _, err := s.Cancel(ctx, id); !errors.Is(err, order.ErrNotFound) {
				t.Fatalf("Cancel(%d) = %v; want ErrNotFound", id, err)
			}
			if _, err := ordertest.Fresh(s).Get(ctx, id); !errors.Is(err, order.ErrNotFound) {
				t.Fatalf("Get(%d) = %v; want ErrNotFound", id, err)
			}
		}
	}
	if rdb.HExists(ctx, p+":status", "5001").Val() || rdb.HGet(ctx, p+":status", "5002").Val() != "pending" ||
		rdb.HExists(ctx, p+":data", "5002").Val() || rdb.HGet(ctx, p+":status", "5003").Val() != "pending" ||
		rdb.HGet(ctx, p+":status", "5004").Val() != "" || rdb.Get(ctx, p+":version").Val() != version {
		t.Fatal("a cancel of a half-written order changed Redis")
	}
	for _, want := range []string{"order=5001 missing=status", "order=5002 missing=data", "order=5003 missing=data", "order=5004 missing=status"} {
		if n := strings.Count(logs.String(), want); n != 1 {
			t.Errorf("%q logged %d times; want once:\n%s", want, n, logs.String())
		}
	}
}

// TestKeyAnsweredFromTheCacheIsConfirmed: within a Trip, a key in the cache is answered
// before the limiter's round trip, and order.Confirm refuses it when another store (another
// instance) revoked it before the request began. Without a Trip, Lookup reads Redis.
func TestKeyAnsweredFromTheCacheIsConfirmed(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv)
	prefix := redistest.Prefix(t)
	here, _ := redisstore.NewKeys(rdb, prefix, time.Second)
	there, _ := redisstore.NewKeys(client(t, srv), prefix, time.Second)
	l, _ := redisstore.NewLimiter(rdb, redisstore.LimiterOptions{Prefix: prefix})
	_, rec, err := order.NewKey("cached", order.Pro, order.Limits{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := there.Add(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	request := func() (lookupErr, confirmErr error) {
		ctx := order.Begin(context.Background())
		_, lookupErr = here.Lookup(ctx, rec.Hash)
		if _, err := l.Allow(ctx, "key:"+string(rec.Hash), rec.Limits()); err != nil {
			t.Fatal(err)
		}
		return lookupErr, order.Confirm(ctx)
	}
	if lerr, cerr := request(); lerr != nil || cerr != nil { // read, and now in the cache
		t.Fatalf("first request: %v, %v", lerr, cerr)
	}
	if lerr, cerr := request(); lerr != nil || cerr != nil {
		t.Fatalf("second request: %v, %v", lerr, cerr)
	}
	if _, err := there.Revoke(context.Background(), "cached"); err != nil {
		t.Fatal(err)
	}
	lerr, cerr := request()
	if lerr != nil || !errors.Is(cerr, order.ErrKeyNotFound) {
		t.Fatalf("after the revocation: lookup %v, confirm %v; want the cache's answer, then ErrKeyNotFound", lerr, cerr)
	}
	if _, err := here.Lookup(context.Background(), rec.Hash); !errors.Is(err, order.ErrKeyNotFound) {
		t.Fatalf("without a Trip: %v; want ErrKeyNotFound", err)
	}
}

// TestGenerationMissingOrReplaced: a Redis whose orders have a version but no generation (as
// a loss of data leaves it) is a version of its own at every read, and the reader writes
// nothing; every change sets a new generation, so a counter that comes back to a number
// seen before (a replica that lagged, then took writes) is another version.
func TestGenerationMissingOrReplaced(t *testing.T) {
	rdb := client(t, redistest.Start(t))
	prefix := redistest.Prefix(t)
	s := ordersWithPrefix(t, rdb, prefix)
	ctx := context.Background()
	p := "{" + prefix + ":orders}"
	seen, err := s.Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := s.Version(ctx); again != seen {
		t.Fatal("the version moved without a change")
	}

	rdb.Del(ctx, p+":generation")
	v1, _ := s.Version(ctx)
	v2, _ := s.Version(ctx)
	if v1 == seen || v2 == seen || v1 == v2 {
		t.Fatal("a version without a generation was taken for another one")
	}
	if n := rdb.Exists(ctx, p+":generation").Val(); n != 0 {
		t.Fatal("a reader wrote a generation")
	}

	// The state an instance saw, then a lagging replica's: counter back by one, generation
	// as it was; then one change on it brings the counter back to the number seen.
	counter := rdb.Get(ctx, p+":version").Val()
	gen := newGenerationFor(t, rdb, p)
	before, _ := s.Version(ctx)
	rdb.Decr(ctx, p+":version")
	if _, _, err := s.Cancel(ctx, pendingID(t, s)); err != nil {
		t.Fatal(err)
	}
	if rdb.Get(ctx, p+":version").Val() != counter {
		t.Fatal("the fixture did not count back to the same number")
	}
	if rdb.Get(ctx, p+":generation").Val() == gen {
		t.Fatal("a cancel kept the generation")
	}
	if after, _ := s.Version(ctx); after == before {
		t.Fatal("the same counter after a change is the same version")
	}
}

// newGenerationFor sets a known generation, as a writer would, and returns it.
func newGenerationFor(t *testing.T, rdb *redis.Client, p string) string {
	t.Helper()
	const g = "generation-before"
	rdb.Set(context.Background(), p+":generation", g, 0)
	return g
}

// pendingID is the id of a pending order of the store.
func pendingID(t *testing.T, s *redisstore.Orders) int64 {
	t.Helper()
	list, err := ordertest.Fresh(s).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range list {
		if o.Status == order.StatusPending {
			return o.ID
		}
	}
	t.Fatal("no pending order in the fixture")
	return 0
}

// ordersWithPrefix is the order store of the fixture under prefix.
func ordersWithPrefix(t *testing.T, rdb *redis.Client, prefix string) *redisstore.Orders {
	t.Helper()
	s := emptyOrders(t, rdb, prefix)
	if _, err := s.Import(context.Background(), ordertest.Fixture()); err != nil {
		t.Fatal(err)
	}
	return s
}
