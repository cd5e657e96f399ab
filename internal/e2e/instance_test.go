package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/plan"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
)

// deployment is several instances of the service on one Redis, as in production: each has
// its own client, stores and limiter, and they share only Redis.
type deployment struct {
	redis  *redistest.Server
	prefix string
	// timeout bounds each Redis call of the instances: generous by default, since a burst
	// under the race detector on two cores queues for connections; the outage test makes it
	// short, to show that requests fail fast.
	timeout time.Duration
	// ordersPoll and keysPoll are orderd serve's defaults.
	ordersPoll, keysPoll time.Duration
	clock                func() time.Time
	contract             *apitest.Contract
	admin                *redisstore.Keys
	orders               *redisstore.Orders
	rdb                  goredis.UniversalClient
}

func newDeployment(t *testing.T, srv *redistest.Server, clock func() time.Time) *deployment {
	t.Helper()
	d := &deployment{redis: srv, prefix: redistest.Prefix(t), clock: clock, contract: apitest.Load(t), timeout: 5 * time.Second,
		ordersPoll: 100 * time.Millisecond, keysPoll: 250 * time.Millisecond}
	d.rdb = d.client(t)
	var err error
	if d.admin, err = redisstore.NewKeys(d.rdb, d.prefix, time.Second); err != nil {
		t.Fatal(err)
	}
	if d.orders, err = redisstore.NewOrders(d.rdb, d.prefix, time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := d.orders.Import(context.Background(), ordertest.Fixture()); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d *deployment) client(t *testing.T) goredis.UniversalClient {
	t.Helper()
	rdb, err := redisstore.Open(d.redis.URL(), d.timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// instance starts one more instance of the service.
func (d *deployment) instance(t *testing.T, fallback ratelimit.Limiter) *instance {
	t.Helper()
	rdb := d.client(t)
	orders, _ := redisstore.NewOrders(rdb, d.prefix, d.timeout)
	pets, _ := redisstore.NewPets(rdb, d.prefix, d.timeout)
	keys, _ := redisstore.NewKeys(rdb, d.prefix, d.timeout)
	// As orderd serve does: poll the version counters (see docs/redis-layout.md).
	watchCtx, stopWatching := context.WithCancel(context.Background())
	t.Cleanup(stopWatching)
	go orders.Watch(watchCtx, d.ordersPoll)
	go keys.Watch(watchCtx, d.keysPoll)
	limiter, err := redisstore.NewLimiter(rdb, redisstore.LimiterOptions{
		Prefix: d.prefix, Timeout: d.timeout, Clock: d.clock, Ban: ratelimit.DefaultBanPolicy, Fallback: fallback,
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := api.New(api.Config{
		Orders: orders, Pets: pets, Keys: keys, Limiter: limiter, Now: d.clock,
		Ready: func(ctx context.Context) error { return rdb.Ping(ctx).Err() },
		Sunset: api.Sunset{
			DeprecatedAt: time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC),
			SunsetAt:     time.Date(2027, 7, 1, 0, 0, 0, 0, time.UTC),
			Link:         "https://docs.petstore.example/migrate",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &instance{srv: srv, contract: d.contract}
}

// key creates a key through the admin store, as `orderd keys create --redis-url` does.
func (d *deployment) key(t *testing.T, name string, p plan.Plan) string {
	t.Helper()
	k, rec, err := auth.NewKey(name, p, plan.Limits{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := d.admin.Add(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	return k
}

type instance struct {
	srv      *httptest.Server
	contract *apitest.Contract
}

// do sends one request with key (none if empty) and checks the answer against openapi.yaml.
func (in *instance) do(t *testing.T, method, path, key string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, in.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return in.contract.Do(t, in.srv.Client(), req)
}
