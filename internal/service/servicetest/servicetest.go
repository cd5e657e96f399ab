// Package servicetest runs the real service for tests, as `orderd serve` runs it, on stores
// filled as `orderd import` and `orderd keys create` fill them.
package servicetest

import (
	"cmp"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/service"
)

// Run serves cfg on a free loopback port (whatever cfg.Addr says) until the test ends, then
// shuts down as on SIGTERM; the test fails if that was not clean.
func Run(tb testing.TB, cfg service.Config) *service.Service {
	tb.Helper()
	cfg.Addr = "127.0.0.1:0"
	ctx, stop := context.WithCancel(context.Background())
	svc, err := service.Open(ctx, cfg)
	if err != nil {
		stop()
		tb.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- svc.Run(ctx) }()
	tb.Cleanup(func() {
		stop()
		if err := <-ran; err != nil {
			tb.Errorf("service: %v", err)
		}
		svc.Close()
	})
	return svc
}

// Embedded returns DefaultConfig in the embedded mode on a new SQLite file in tb.TempDir(),
// into which orders and pets were imported as `orderd import` does.
func Embedded(tb testing.TB, orders []order.Order, pets []order.Pet) service.Config {
	tb.Helper()
	cfg := service.DefaultConfig()
	cfg.Store.DB = filepath.Join(tb.TempDir(), "orderd.db")
	admin := cfg.Store
	admin.CreateDB = true
	withStores(tb, admin, func(s *service.Stores) error {
		_, err := Import(context.Background(), s, orders, pets)
		return err
	})
	return cfg
}

// AddKey adds a key named name, of plan p with limits (for enterprise), to the stores of sc
// as `orderd keys create` does, and returns the key.
func AddKey(tb testing.TB, sc service.StoreConfig, name string, p order.Plan, limits order.Limits) string {
	tb.Helper()
	key, rec, err := order.NewKey(name, p, limits, time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	withStores(tb, sc, func(s *service.Stores) error { return s.Keys.Add(context.Background(), rec) })
	return key
}

// Import writes orders and pets into s as `orderd import` does, both lists checked first.
func Import(ctx context.Context, s *service.Stores, orders []order.Order, pets []order.Pet) (service.Imported, error) {
	if err := cmp.Or(order.ValidateAll(orders), order.ValidateAll(pets)); err != nil {
		return service.Imported{}, err
	}
	return s.ImportBatches(ctx, order.Slice(orders, service.ImportBatch), order.Slice(pets, service.ImportBatch))
}

// withStores opens the stores of sc for f, and closes them.
func withStores(tb testing.TB, sc service.StoreConfig, f func(*service.Stores) error) {
	tb.Helper()
	stores, err := service.OpenStores(sc)
	if err != nil {
		tb.Fatal(err)
	}
	defer stores.Close()
	if err := f(stores); err != nil {
		tb.Fatal(err)
	}
}
