package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
	"github.com/petstore/orderd/internal/service"
	"github.com/petstore/orderd/internal/service/servicetest"
)

// deployment is several instances of the service on one Redis, as in production: each is
// opened by package service from the same Config, has its own client, stores and limiter,
// and they share only Redis.
type deployment struct {
	redis *redistest.Server
	// cfg is what each instance is started with; a test changes it before starting them.
	// Each Redis call of the instances is bounded generously, since a burst under the race
	// detector on two cores queues for connections; the outage test makes the bound short,
	// to show that requests fail fast.
	cfg      service.Config
	contract *apitest.Contract
	// admin is the stores as `orderd keys` and `orderd import` open them.
	admin *service.Stores
	// rdb reads the layout of docs/redis-layout.md directly.
	rdb goredis.UniversalClient
}

func newDeployment(t *testing.T, srv *redistest.Server, clock func() time.Time) *deployment {
	t.Helper()
	cfg := service.DefaultConfig()
	cfg.Store.RedisURL = srv.URL()
	cfg.Store.RedisPrefix = redistest.Prefix(t)
	cfg.Store.RedisTimeout = 5 * time.Second
	cfg.Now = clock
	d := &deployment{redis: srv, cfg: cfg, contract: apitest.Load(t)}

	admin := cfg.Store
	admin.RedisTimeout = time.Second
	var err error
	if d.admin, err = service.OpenStores(admin); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.admin.Close() })
	if _, err := servicetest.Import(context.Background(), d.admin, ordertest.Fixture(), nil); err != nil {
		t.Fatal(err)
	}
	if d.rdb, err = redisstore.Open(srv.URL(), time.Second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.rdb.Close() })
	return d
}

// instance starts one more instance of the service, whose limiter does as fallback says
// while Redis cannot be reached, and stops it at the end of the test.
func (d *deployment) instance(t *testing.T, fallback string) *instance {
	t.Helper()
	cfg := d.cfg
	cfg.LimiterFallback = fallback
	svc := servicetest.Run(t, cfg)
	return &instance{url: svc.URL(), contract: d.contract}
}

// key creates a key through the admin stores, as `orderd keys create --redis-url` does.
func (d *deployment) key(t *testing.T, name string, p order.Plan) string {
	t.Helper()
	k, rec, err := order.NewKey(name, p, order.Limits{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := d.admin.Keys.Add(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	return k
}

type instance struct {
	url      string
	contract *apitest.Contract
}

// do sends one request with key (none if empty) and checks the answer against openapi.yaml.
func (in *instance) do(t *testing.T, method, path, key string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, in.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return in.contract.Do(t, http.DefaultClient, req)
}
