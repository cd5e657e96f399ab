package redisstore_test

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
)

func client(tb testing.TB, srv *redistest.Server) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, DialTimeout: time.Second, ReadTimeout: time.Second})
	tb.Cleanup(func() { c.Close() })
	return c
}

// emptyOrders is an Orders on rdb under prefix, with nothing imported.
func emptyOrders(tb testing.TB, rdb *redis.Client, prefix string) *redisstore.Orders {
	tb.Helper()
	s, err := redisstore.NewOrders(rdb, prefix, time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func newOrders(tb testing.TB, rdb *redis.Client, orders []order.Order) *redisstore.Orders {
	tb.Helper()
	s := emptyOrders(tb, rdb, redistest.Prefix(tb))
	if _, err := s.Import(context.Background(), orders); err != nil {
		tb.Fatal(err)
	}
	return s
}

func TestOrdersConformance(t *testing.T) {
	rdb := client(t, redistest.Start(t))
	ordertest.Run(t, func(tb testing.TB, orders []order.Order) order.Store { return newOrders(tb, rdb, orders) })
}

func TestKeysConformance(t *testing.T) {
	rdb := client(t, redistest.Start(t))
	ordertest.RunKeys(t, func(tb testing.TB) ordertest.KeyHarness {
		p := redistest.Prefix(tb)
		s, err := redisstore.NewKeys(rdb, p, time.Second)
		if err != nil {
			tb.Fatal(err)
		}
		return ordertest.KeyHarness{KeyStore: s, Plant: func(tb testing.TB, k order.Key) { redistest.PlantKey(tb, rdb, p, k) }}
	})
}

// TestInt64NeverPassesThroughALuaNumber: ids next to the top of int64 differ only past the
// 53 bits of a double; a cancel of one must not touch the other.
func TestInt64NeverPassesThroughALuaNumber(t *testing.T) {
	rdb := client(t, redistest.Start(t))
	ship := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	s := newOrders(t, rdb, []order.Order{
		{ID: math.MaxInt64, PetID: math.MaxInt64 - 1, ShipDate: ship, Status: order.StatusPending},
		{ID: math.MaxInt64 - 1, PetID: math.MaxInt64, ShipDate: ship, Status: order.StatusPending},
	})
	o, changed, err := s.Cancel(context.Background(), math.MaxInt64-1)
	if err != nil || !changed || o.ID != math.MaxInt64-1 || o.PetID != math.MaxInt64 {
		t.Fatalf("Cancel = %+v, %v, %v", o, changed, err)
	}
	list, _ := ordertest.Fresh(s).List(context.Background())
	if list[0].ID != math.MaxInt64-1 || list[0].Status != order.StatusCancelled ||
		list[1].ID != math.MaxInt64 || list[1].PetID != math.MaxInt64-1 || list[1].Status != order.StatusPending {
		t.Fatalf("List = %+v", list)
	}
}

// TestImportIsIdempotentAndKeepsCancels: importing the same file again changes nothing, not
// even the version, and never undoes a cancel.
func TestImportIsIdempotentAndKeepsCancels(t *testing.T) {
	rdb := client(t, redistest.Start(t))
	ctx := context.Background()
	s := newOrders(t, rdb, ordertest.Fixture())
	if _, _, err := s.Cancel(ctx, 1); err != nil {
		t.Fatal(err)
	}
	before, _ := ordertest.Fresh(s).List(ctx)
	v0 := version(t, s)
	n, err := s.Import(ctx, ordertest.Fixture())
	if err != nil || n != 0 || version(t, s) != v0 {
		t.Fatalf("second import changed %d fields, err %v, version %d to %d; want none", n, err, v0, version(t, s))
	}
	after, _ := ordertest.Fresh(s).List(ctx)
	if len(after) != len(before) || after[1].Status != order.StatusCancelled {
		t.Fatalf("after re-import: %+v", after)
	}
	changedFixture := ordertest.Fixture()
	changedFixture[0].Quantity = 9
	if n, _ := s.Import(ctx, changedFixture); n != 1 {
		t.Fatalf("import of one changed order changed %d fields", n)
	}
}

func TestPets(t *testing.T) {
	rdb := client(t, redistest.Start(t))
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	s, err := redisstore.NewPets(rdb, prefix, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ImportBatches(ctx, order.Slice([]order.Pet{{ID: math.MaxInt64, Name: "Rex", Status: order.PetSold}}, 1000)); err != nil {
		t.Fatal(err)
	}
	if p, err := s.Pet(ctx, math.MaxInt64); err != nil || p != (order.Pet{ID: math.MaxInt64, Name: "Rex", Status: order.PetSold}) {
		t.Fatalf("Pet = %+v, %v", p, err)
	}
	if _, err := s.Pet(ctx, math.MaxInt64-1); !errors.Is(err, order.ErrPetNotFound) {
		t.Fatalf("unknown pet: %v", err)
	}
	// Pets another system wrote, which the contract does not allow, are not served.
	for id, raw := range map[string]string{
		"1": `{"name":"` + strings.Repeat("x", order.MaxPetNameLength+1) + `","status":"sold"}`,
		"2": `{"name":"Rex","status":"lost"}`,
		"3": `not json`,
	} {
		if err := rdb.HSet(ctx, "{"+prefix+":pets}:data", id, raw).Err(); err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.ParseInt(id, 10, 64)
		if p, err := s.Pet(ctx, n); !errors.Is(err, order.ErrCorrupt) {
			t.Errorf("pet %s written as %.40s: %+v, %v; want order.ErrCorrupt", id, raw, p, err)
		}
	}
}

// TestUnreachableRedisIsUnavailable: every store reports ErrUnavailable, within its timeout.
func TestUnreachableRedisIsUnavailable(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv)
	ctx := context.Background()
	orders := newOrders(t, rdb, ordertest.Fixture())
	keys, _ := redisstore.NewKeys(rdb, redistest.Prefix(t), time.Second)
	pets, _ := redisstore.NewPets(rdb, redistest.Prefix(t), time.Second)
	secrets, _ := redisstore.NewSecrets(rdb, redistest.Prefix(t), time.Second)
	srv.Stop()
	start := time.Now()
	checks := map[string]error{}
	_, checks["List"] = ordertest.Fresh(orders).List(ctx)
	_, _, checks["Cancel"] = orders.Cancel(ctx, 1)
	_, checks["Pet"] = pets.Pet(ctx, 1)
	_, checks["Lookup"] = keys.Lookup(ctx, order.HashOf("osk_x"))
	_, checks["PageTokenSecret"] = secrets.PageTokenSecret(ctx)
	for op, err := range checks {
		if !errors.Is(err, order.ErrUnavailable) {
			t.Errorf("%s: %v, want ErrUnavailable", op, err)
		}
	}
	// Each call is bounded by its timeout (1s), plus some slack for a busy machine.
	if d := time.Since(start); d > time.Duration(len(checks))*1500*time.Millisecond {
		t.Errorf("%d calls took %v", len(checks), d)
	}
	srv.Restart(t)
	if _, err := ordertest.Fresh(orders).List(ctx); err != nil {
		t.Fatalf("after Redis came back: %v", err)
	}
}

func TestPrefixIsChecked(t *testing.T) {
	for _, bad := range []string{"", "a b", "x{y}", "with\nnewline"} {
		if _, err := redisstore.NewOrders(nil, bad, 0); err == nil {
			t.Errorf("prefix %q accepted", bad)
		}
	}
}
