package e2e

import (
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/pagetoken"
	"github.com/petstore/orderd/internal/pagetoken/pagetokentest"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/ratelimit/ratelimittest"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
	"github.com/petstore/orderd/internal/webhook"
	"github.com/petstore/orderd/internal/webhook/webhooktest"
)

// TestConformanceOnRedisCluster runs the store, finder, key-store, secret-store, webhook and limiter
// suites against a three-node Redis Cluster, through the same URL form an operator uses: the
// keys that one script touches share a hash tag, or these would fail with CROSSSLOT.
func TestConformanceOnRedisCluster(t *testing.T) {
	cluster := redistest.StartCluster(t)
	rdb, err := redisstore.Open(cluster.URL(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	if _, ok := rdb.(*goredis.ClusterClient); !ok {
		t.Fatalf("%s opened a %T", cluster.URL(), rdb)
	}

	// newOrders is the order store of a fresh prefix on the Cluster, holding orders.
	newOrders := func(tb testing.TB, orders []order.Order) *redisstore.Orders {
		s, err := redisstore.NewOrders(rdb, redistest.Prefix(tb), 2*time.Second)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := s.Import(t.Context(), orders); err != nil {
			tb.Fatal(err)
		}
		return s
	}
	t.Run("Orders", func(t *testing.T) {
		ordertest.Run(t, func(tb testing.TB, orders []order.Order) order.Store { return newOrders(tb, orders) })
	})
	t.Run("Find", func(t *testing.T) {
		ordertest.RunFind(t, func(tb testing.TB, orders []order.Order) order.Store { return newOrders(tb, orders) })
	})
	t.Run("Keys", func(t *testing.T) {
		ordertest.RunKeys(t, func(tb testing.TB) ordertest.KeyHarness {
			p := redistest.Prefix(tb)
			s, err := redisstore.NewKeys(rdb, p, 2*time.Second)
			if err != nil {
				tb.Fatal(err)
			}
			return ordertest.KeyHarness{KeyStore: s, Plant: func(tb testing.TB, k order.Key) { redistest.PlantKey(tb, rdb, p, k) }}
		})
	})
	t.Run("Webhooks", func(t *testing.T) {
		webhooktest.Run(t, func(tb testing.TB) webhook.Store {
			s, err := redisstore.NewWebhooks(rdb, redistest.Prefix(tb), 2*time.Second)
			if err != nil {
				tb.Fatal(err)
			}
			return s
		})
	})
	t.Run("OneRoundTripCarriesTheVersions", func(t *testing.T) {
		// The limiter's script and the versions' reads go to different slots: go-redis
		// splits the pipeline per node. What it read must be what a plain read finds.
		prefix := redistest.Prefix(t)
		orders, _ := redisstore.NewOrders(rdb, prefix, 2*time.Second)
		if _, err := orders.Import(t.Context(), ordertest.Fixture()); err != nil {
			t.Fatal(err)
		}
		l, _ := redisstore.NewLimiter(rdb, redisstore.LimiterOptions{Prefix: prefix, Timeout: 2 * time.Second})
		ctx := order.Begin(t.Context())
		if d, err := l.Allow(ctx, "addr:192.0.2.1", order.Limits{PerMinute: 10, PerDay: 10}); err != nil || !d.Allowed {
			t.Fatalf("Allow = %+v, %v", d, err)
		}
		if order.TripOf(ctx).Carried == nil {
			t.Fatal("the limiter's round trip carried nothing")
		}
		carried, err := orders.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if plain, err := orders.Version(t.Context()); err != nil || plain != carried {
			t.Fatalf("version read with the script %d, alone %d (%v)", carried, plain, err)
		}
		if err := order.Confirm(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("Secrets", func(t *testing.T) {
		// Each handle is a Cluster client of its own, as each instance has.
		pagetokentest.RunSecretStore(t, func(tb testing.TB) func() pagetoken.SecretStore {
			prefix := redistest.Prefix(tb)
			return func() pagetoken.SecretStore {
				c, err := redisstore.Open(cluster.URL(), 2*time.Second)
				if err != nil {
					tb.Fatal(err)
				}
				tb.Cleanup(func() { c.Close() })
				s, err := redisstore.NewSecrets(c, prefix, 2*time.Second)
				if err != nil {
					tb.Fatal(err)
				}
				return s
			}
		})
	})
	t.Run("Limiter", func(t *testing.T) {
		ratelimittest.Run(t, func(tb testing.TB, clock func() time.Time, policy ratelimit.BanPolicy) ratelimit.Limiter {
			l, err := redisstore.NewLimiter(rdb, redisstore.LimiterOptions{Prefix: redistest.Prefix(tb), Clock: clock, Ban: policy, Timeout: 2 * time.Second})
			if err != nil {
				tb.Fatal(err)
			}
			return l
		})
	})
}
