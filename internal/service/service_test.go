package service_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/redistest"
	"github.com/petstore/orderd/internal/service"
	"github.com/petstore/orderd/internal/service/servicetest"
	"github.com/petstore/orderd/internal/sqlitestore"
)

// embedded is a Config of the embedded mode holding the fixture, and a key of plan p in it.
func embedded(t *testing.T, p order.Plan) (service.Config, string) {
	t.Helper()
	cfg := servicetest.Embedded(t, ordertest.Fixture(), nil)
	return cfg, servicetest.AddKey(t, cfg.Store, "test", p, order.Limits{})
}

func get(t *testing.T, url, key string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, body
}

func TestEmbedded(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		cfg, key := embedded(t, order.Free)
		svc := servicetest.Run(t, cfg)
		req, _ := http.NewRequest("GET", svc.URL()+"/v1/store/orders", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		if res, body := apitest.Load(t).Do(t, http.DefaultClient, req); res.StatusCode != 200 || !strings.Contains(string(body), `"id":9223372036854775807`) {
			t.Fatalf("list: %d %s", res.StatusCode, body)
		}
		if res, body := get(t, svc.URL()+"/metrics", ""); res.StatusCode != 200 || !strings.Contains(string(body), `orderd_http_requests_total{operation="listOrders",status="200"} 1`) {
			t.Fatalf("/metrics on the API address: %d\n%.500s", res.StatusCode, body)
		}
		if svc.MetricsAddr() != "" {
			t.Fatalf("MetricsAddr %q without Config.MetricsAddr", svc.MetricsAddr())
		}
	})
	t.Run("MetricsOnTheirOwnAddress", func(t *testing.T) {
		cfg, _ := embedded(t, order.Free)
		cfg.MetricsAddr = "127.0.0.1:0"
		svc := servicetest.Run(t, cfg)
		if res, _ := get(t, "http://"+svc.MetricsAddr()+"/metrics", ""); res.StatusCode != 200 {
			t.Fatalf("/metrics on its own address: %d", res.StatusCode)
		}
		if res, _ := get(t, svc.URL()+"/metrics", ""); res.StatusCode != 404 {
			t.Fatalf("/metrics on the API address: %d, want 404", res.StatusCode)
		}
		if res, _ := get(t, "http://"+svc.MetricsAddr()+"/healthz", ""); res.StatusCode != 404 {
			t.Fatalf("/healthz on the metrics address: %d, want 404 (only /metrics is there)", res.StatusCode)
		}
	})
	t.Run("KeysAddedAndRevokedElsewhereCountAtOnce", func(t *testing.T) {
		cfg, _ := embedded(t, order.Free)
		svc := servicetest.Run(t, cfg)
		late := servicetest.AddKey(t, cfg.Store, "late", order.Pro, order.Limits{})
		if res, body := get(t, svc.URL()+"/v1/store/orders", late); res.StatusCode != 200 {
			t.Fatalf("a key added to the file: %d %s", res.StatusCode, body)
		}
		stores, err := service.OpenStores(cfg.Store)
		if err != nil {
			t.Fatal(err)
		}
		defer stores.Close()
		if _, err := stores.Keys.Revoke(context.Background(), "late"); err != nil {
			t.Fatal(err)
		}
		if res, body := get(t, svc.URL()+"/v1/store/orders", late); res.StatusCode != 401 {
			t.Fatalf("a key revoked in the file: %d %s", res.StatusCode, body)
		}
	})
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	notSQLite := filepath.Join(dir, "keys.json")
	os.WriteFile(notSQLite, []byte(strings.Repeat("[]", 100)), 0o600)
	for _, tc := range []struct {
		name string
		cfg  service.Config
		want string
	}{
		{"NoDB", service.Config{}, "no SQLite file named"},
		{"MissingDB", service.Config{Store: service.StoreConfig{DB: filepath.Join(dir, "none.db")}}, "none.db: no such file"},
		{"MissingDirectory", service.Config{Store: service.StoreConfig{DB: filepath.Join(dir, "none", "orderd.db"), CreateDB: true}}, "directory " + filepath.Join(dir, "none") + " does not exist"},
		{"DBIsADirectory", service.Config{Store: service.StoreConfig{DB: dir}}, "is a directory"},
		{"DBIsNotSQLite", service.Config{Store: service.StoreConfig{DB: notSQLite}}, "keys.json"},
		{"BadRedisURL", service.Config{Store: service.StoreConfig{RedisURL: "http://127.0.0.1:1"}}, "redis URL"},
		{"BadRedisPrefix", service.Config{Store: service.StoreConfig{RedisURL: "redis://127.0.0.1:1", RedisPrefix: "a b"}}, "prefix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Addr = "127.0.0.1:0"
			svc, err := service.Open(context.Background(), tc.cfg)
			if err == nil {
				svc.Close()
				t.Fatal("Open accepted it")
			}
			var ce *service.ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v (%T), want a *ConfigError naming %q", err, err, tc.want)
			}
		})
	}
}

// TestImport: in both stores, a second import changes nothing, and no import undoes a cancel.
func TestImport(t *testing.T) {
	srv := redistest.Start(t)
	for name, sc := range map[string]service.StoreConfig{
		"Redis":  {RedisURL: srv.URL(), RedisPrefix: redistest.Prefix(t)},
		"SQLite": {DB: filepath.Join(t.TempDir(), "orderd.db"), CreateDB: true},
	} {
		t.Run(name, func(t *testing.T) { testImport(t, sc) })
	}
}

func testImport(t *testing.T, sc service.StoreConfig) {
	stores, err := service.OpenStores(sc)
	if err != nil {
		t.Fatal(err)
	}
	defer stores.Close()
	ctx := context.Background()
	pets := []order.Pet{{ID: 1, Name: "Rex", Status: order.PetSold}}
	if n, err := servicetest.Import(ctx, stores, ordertest.Fixture(), pets); err != nil || !changed(n) {
		t.Fatalf("import: %+v, %v", n, err)
	}
	if n, err := servicetest.Import(ctx, stores, ordertest.Fixture(), pets); err != nil || changed(n) {
		t.Fatalf("second import: %+v, %v; want nothing changed", n, err)
	}
	if p, err := stores.Pets.Pet(ctx, 1); err != nil || p != pets[0] {
		t.Fatalf("pet: %+v %v", p, err)
	}
	pending := pendingOrder(t, ordertest.Fixture())
	if _, _, err := stores.Orders.Cancel(ctx, pending.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := servicetest.Import(ctx, stores, ordertest.Fixture(), pets); err != nil || changed(n) {
		t.Fatalf("import after a cancel: %+v, %v; want nothing changed", n, err)
	}
	list, err := ordertest.Fresh(stores.Orders).List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range list {
		if o.ID == pending.ID && o.Status != order.StatusCancelled {
			t.Fatalf("order %d after the import: %+v; want it cancelled still", o.ID, o)
		}
	}
}

// pendingOrder is the first pending order of orders.
func pendingOrder(t *testing.T, orders []order.Order) order.Order {
	t.Helper()
	for _, o := range orders {
		if o.Status == order.StatusPending {
			return o
		}
	}
	t.Fatal("no pending order")
	return order.Order{}
}

// changed reports whether an import wrote anything.
func changed(n service.Imported) bool {
	return n.Imported != (sqlitestore.Imported{}) || n.OrderFieldsChanged != 0
}
