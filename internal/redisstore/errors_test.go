package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
)

// deployment is every store and a limiter of one prefix, with data in Redis.
type deployment struct {
	orders  *redisstore.Orders
	keys    *redisstore.Keys
	pets    *redisstore.Pets
	secrets *redisstore.Secrets
	// limiter has no fallback; fallback is a limiter that falls back to memory.
	limiter, fallback *redisstore.Limiter
	fallbacks         atomic.Int64 // decisions the fallback made
	memory            *ratelimit.Memory
}

func newDeployment(t *testing.T, rdb redis.UniversalClient, prefix string) *deployment {
	t.Helper()
	d := &deployment{memory: ratelimit.NewMemory(nil, ratelimit.DefaultBanPolicy)}
	var err error
	if d.orders, err = redisstore.NewOrders(rdb, prefix, time.Second); err != nil {
		t.Fatal(err)
	}
	d.keys, _ = redisstore.NewKeys(rdb, prefix, time.Second)
	d.pets, _ = redisstore.NewPets(rdb, prefix, time.Second)
	d.secrets, _ = redisstore.NewSecrets(rdb, prefix, time.Second)
	d.limiter, _ = redisstore.NewLimiter(rdb, redisstore.LimiterOptions{Prefix: prefix})
	d.fallback, _ = redisstore.NewLimiter(rdb, redisstore.LimiterOptions{Prefix: prefix, Fallback: d.memory,
		OnFallback: func() { d.fallbacks.Add(1) }})
	return d
}

// fill writes what the operations below read and change.
func (d *deployment) fill(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if _, err := d.orders.Import(ctx, ordertest.Fixture()); err != nil {
		t.Fatal(err)
	}
	if err := d.pets.ImportBatches(ctx, order.Slice([]order.Pet{{ID: 1, Name: "Rex", Status: order.PetAvailable}}, 1000)); err != nil {
		t.Fatal(err)
	}
	_, k, _ := order.NewKey("old", order.Free, order.Limits{}, time.Now())
	if err := d.keys.Add(ctx, k); err != nil {
		t.Fatal(err)
	}
	if _, err := d.limiter.Allow(ctx, "key:x", anyLimits); err != nil {
		t.Fatal(err)
	}
	if _, err := d.secrets.PageTokenSecret(ctx); err != nil {
		t.Fatal(err)
	}
}

var anyLimits = order.Limits{PerMinute: 100, PerDay: 1000}

// op is one call of a store, whether it writes, and whether all it writes is deletions
// (which Redis lets through when out of memory).
type op struct {
	name    string
	writes  bool
	deletes bool
	call    func(ctx context.Context, d *deployment) error
}

var ops = []op{
	{"Orders.List", false, false, func(ctx context.Context, d *deployment) error {
		_, err := ordertest.Fresh(d.orders).List(ctx)
		return err
	}},
	{"Orders.Version", false, false, func(ctx context.Context, d *deployment) error { _, err := d.orders.Version(ctx); return err }},
	{"Orders.Cancel", true, false, func(ctx context.Context, d *deployment) error { _, _, err := d.orders.Cancel(ctx, 1); return err }},
	{"Orders.Import", true, false, func(ctx context.Context, d *deployment) error {
		f := ordertest.Fixture()
		f[0].Quantity++
		_, err := d.orders.Import(ctx, f)
		return err
	}},
	{"Pets.Pet", false, false, func(ctx context.Context, d *deployment) error { _, err := d.pets.Pet(ctx, 1); return err }},
	{"Pets.Import", true, false, func(ctx context.Context, d *deployment) error {
		return d.pets.ImportBatches(ctx, order.Slice([]order.Pet{{ID: 2, Name: "Tom", Status: order.PetAvailable}}, 1000))
	}},
	{"Keys.Lookup", false, false, func(ctx context.Context, d *deployment) error {
		_, err := d.keys.Lookup(ctx, order.HashOf("osk_unknown"))
		if errors.Is(err, order.ErrKeyNotFound) {
			return nil
		}
		return err
	}},
	{"Keys.List", false, false, func(ctx context.Context, d *deployment) error { _, err := d.keys.List(ctx); return err }},
	{"Keys.Add", true, false, func(ctx context.Context, d *deployment) error {
		_, k, _ := order.NewKey("new", order.Free, order.Limits{}, time.Now())
		return d.keys.Add(ctx, k)
	}},
	{"Keys.Revoke", true, true, func(ctx context.Context, d *deployment) error { _, err := d.keys.Revoke(ctx, "old"); return err }},
	// Once made, the secret is only read: a Redis that refuses writes still gives it.
	{"Secrets.PageTokenSecret", false, false, func(ctx context.Context, d *deployment) error {
		_, err := d.secrets.PageTokenSecret(ctx)
		return err
	}},
	{"Limiter.Allow", true, false, func(ctx context.Context, d *deployment) error {
		_, err := d.limiter.Allow(ctx, "key:x", anyLimits)
		return err
	}},
	// Within a request's round trip, the script goes with the reads of the versions, in the
	// batcher's shared pipeline (batch.go).
	{"Limiter.Allow with the versions", true, false, func(ctx context.Context, d *deployment) error {
		_, err := d.limiter.Allow(order.Begin(ctx), "key:x", anyLimits)
		return err
	}},
}

// The operations a Redis refuses, by the way it refuses work.
var (
	everything = func(op) bool { return true }
	writes     = func(o op) bool { return o.writes }
	additions  = func(o op) bool { return o.writes && !o.deletes }
)

// checkOutage runs every operation against a Redis that refuses work one way: each one that
// fails must fail with order.ErrUnavailable naming Redis's code, and each that refused says
// must fail; the limiter with a fallback must decide in memory instead.
func checkOutage(t *testing.T, d *deployment, code string, refused func(op) bool) {
	t.Helper()
	ctx := context.Background()
	for _, o := range ops {
		err := o.call(ctx, d)
		mustFail := refused(o)
		switch {
		case err == nil && mustFail:
			t.Errorf("%s succeeded; want it refused with %s", o.name, code)
		case err != nil && !errors.Is(err, order.ErrUnavailable):
			t.Errorf("%s: %v; want order.ErrUnavailable", o.name, err)
		case err != nil && code != "" && !strings.Contains(err.Error(), code):
			t.Errorf("%s: %v; want Redis's %s in the message", o.name, err, code)
		}
	}
	before := d.fallbacks.Load()
	dec, err := d.fallback.Allow(ctx, "key:y", anyLimits)
	if err != nil || !dec.Allowed || d.fallbacks.Load() != before+1 || d.memory.Len() == 0 {
		t.Errorf("limiter with a fallback: %+v, %v, %d fallback decisions; want one in memory", dec, err, d.fallbacks.Load()-before)
	}
}

func TestRedisRefusingWorkIsAnOutage(t *testing.T) {
	t.Run("OOM", func(t *testing.T) {
		srv := redistest.Start(t)
		d := newDeployment(t, client(t, srv), redistest.Prefix(t))
		d.fill(t)
		srv.MustDo(t, "CONFIG", "SET", "maxmemory-policy", "noeviction")
		srv.MustDo(t, "CONFIG", "SET", "maxmemory", "1")
		checkOutage(t, d, "OOM", additions)
	})
	t.Run("BUSY", func(t *testing.T) {
		srv := redistest.Start(t)
		d := newDeployment(t, client(t, srv), redistest.Prefix(t))
		d.fill(t)
		srv.Busy(t)
		checkOutage(t, d, "BUSY", everything)
	})
	t.Run("READONLY", func(t *testing.T) {
		primary := redistest.Start(t)
		prefix := redistest.Prefix(t)
		newDeployment(t, client(t, primary), prefix).fill(t)
		replica := redistest.StartReplica(t, primary)
		// The old primary after a failover: the data is there, writes are refused.
		checkOutage(t, newDeployment(t, client(t, replica), prefix), "READONLY", writes)
	})
	t.Run("NOPERM", func(t *testing.T) {
		srv := redistest.Start(t)
		prefix := redistest.Prefix(t)
		newDeployment(t, client(t, srv), prefix).fill(t)
		// A user of the deployment whose ACL lets it read, not write, nor run scripts.
		srv.User(t, "reader", "secret", "~*", "+@read", "+@connection")
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "reader", Password: "secret", MaxRetries: -1})
		t.Cleanup(func() { rdb.Close() })
		checkOutage(t, newDeployment(t, rdb, prefix), "NOPERM", writes)
	})
	t.Run("NOPERMOnKeys", func(t *testing.T) {
		srv := redistest.Start(t)
		prefix := redistest.Prefix(t)
		newDeployment(t, client(t, srv), prefix).fill(t)
		// A user that may run every command, on other keys only.
		srv.User(t, "other", "secret", "~other:*", "+@all")
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "other", Password: "secret", MaxRetries: -1})
		t.Cleanup(func() { rdb.Close() })
		checkOutage(t, newDeployment(t, rdb, prefix), "NOPERM", everything)
	})
	t.Run("WRONGPASS", func(t *testing.T) {
		srv := redistest.Start(t)
		srv.User(t, "svc", "secret", "~*", "+@all")
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "svc", Password: "wrong", MaxRetries: -1})
		t.Cleanup(func() { rdb.Close() })
		checkOutage(t, newDeployment(t, rdb, redistest.Prefix(t)), "WRONGPASS", everything)
	})
	t.Run("MISCONF", func(t *testing.T) {
		srv := redistest.Start(t)
		d := newDeployment(t, client(t, srv), redistest.Prefix(t))
		d.fill(t)
		srv.FailSaves(t)
		checkOutage(t, d, "MISCONF", writes)
	})
}
