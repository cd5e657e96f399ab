package servicetest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/plan"
	"github.com/petstore/orderd/internal/service"
)

// Embedded returns DefaultConfig in the embedded mode on a new SQLite file in tb.TempDir(),
// into which orders and pets were imported as `orderd import` does.
func Embedded(tb testing.TB, orders []order.Order, pets []order.Pet) service.Config {
	tb.Helper()
	cfg := service.DefaultConfig()
	cfg.Store.DB = filepath.Join(tb.TempDir(), "orderd.db")
	admin := cfg.Store
	admin.CreateDB = true
	stores, err := service.OpenStores(admin)
	if err != nil {
		tb.Fatal(err)
	}
	defer stores.Close()
	if _, err := stores.Import(context.Background(), orders, pets); err != nil {
		tb.Fatal(err)
	}
	return cfg
}

// AddKey adds a key named name, of plan p with limits (for enterprise), to the stores of sc
// as `orderd keys create` does, and returns the key.
func AddKey(tb testing.TB, sc service.StoreConfig, name string, p plan.Plan, limits plan.Limits) string {
	tb.Helper()
	stores, err := service.OpenStores(sc)
	if err != nil {
		tb.Fatal(err)
	}
	defer stores.Close()
	key, rec, err := auth.NewKey(name, p, limits, time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	if err := stores.Keys.Add(context.Background(), rec); err != nil {
		tb.Fatal(err)
	}
	return key
}
