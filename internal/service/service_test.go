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
	"time"

	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/plan"
	"github.com/petstore/orderd/internal/redistest"
	"github.com/petstore/orderd/internal/service"
	"github.com/petstore/orderd/internal/service/servicetest"
)

// embedded is a Config of the embedded mode holding the fixture, and a key of plan p in it.
func embedded(t *testing.T, p plan.Plan) (service.Config, string) {
	t.Helper()
	cfg := service.DefaultConfig()
	cfg.Store.KeysFile = filepath.Join(t.TempDir(), "keys.json")
	cfg.Store.Orders = ordertest.Fixture()
	admin := cfg.Store
	admin.CreateKeysFile = true
	stores, err := service.OpenStores(admin)
	if err != nil {
		t.Fatal(err)
	}
	defer stores.Close()
	key, rec, err := auth.NewKey("test", p, plan.Limits{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := stores.Keys.Add(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	return cfg, key
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
		cfg, key := embedded(t, plan.Free)
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
		cfg, _ := embedded(t, plan.Free)
		cfg.MetricsAddr = "127.0.0.1:0"
		svc := servicetest.Run(t, cfg)
		if res, _ := get(t, "http://"+svc.MetricsAddr()+"/metrics", ""); res.StatusCode != 200 {
			t.Fatalf("/metrics on its own address: %d", res.StatusCode)
		}
		if res, _ := get(t, svc.URL()+"/metrics", ""); res.StatusCode != 404 {
			t.Fatalf("/metrics on the API address: %d, want 404", res.StatusCode)
		}
	})
	t.Run("KeysFileIsReRead", func(t *testing.T) {
		cfg, _ := embedded(t, plan.Free)
		cfg.Store.KeysReload = 10 * time.Millisecond
		svc := servicetest.Run(t, cfg)
		late, _ := embeddedKey(t, cfg.Store, "late")
		deadline := time.Now().Add(5 * time.Second)
		for {
			if res, _ := get(t, svc.URL()+"/v1/store/orders", late); res.StatusCode == 200 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("a key added to the file is not accepted within 5s")
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// embeddedKey adds a key named name to the keys file of sc, as `orderd keys create` does.
func embeddedKey(t *testing.T, sc service.StoreConfig, name string) (string, auth.Key) {
	t.Helper()
	stores, err := service.OpenStores(sc)
	if err != nil {
		t.Fatal(err)
	}
	defer stores.Close()
	key, rec, _ := auth.NewKey(name, plan.Pro, plan.Limits{}, time.Now())
	if err := stores.Keys.Add(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	return key, rec
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	keysFile := filepath.Join(dir, "keys.json")
	os.WriteFile(keysFile, []byte("[]"), 0o600)
	badOrders := filepath.Join(dir, "orders.json")
	os.WriteFile(badOrders, []byte("[\n  {\"id\": 1, \"status\": \"pending\"},\n  {\"id\": 1, \"status\": \"shipped\"}\n]\n"), 0o600)
	for _, tc := range []struct {
		name string
		cfg  service.Config
		want string
	}{
		{"NoKeysFile", service.Config{}, "a keys file is required without Redis"},
		{"MissingKeysFile", service.Config{Store: service.StoreConfig{KeysFile: filepath.Join(dir, "none.json")}}, "none.json"},
		{"DuplicateOrder", service.Config{Store: service.StoreConfig{KeysFile: keysFile, OrdersFile: badOrders}}, "orders.json:3:3: order 1: duplicate id"},
		{"InvalidPet", service.Config{Store: service.StoreConfig{KeysFile: keysFile, Pets: []order.Pet{{ID: 1, Status: "lost"}}}}, `pet 1: status "lost"`},
		{"FilesWithRedis", service.Config{Store: service.StoreConfig{RedisURL: "redis://127.0.0.1:1", KeysFile: keysFile}}, "with Redis"},
		{"BadRedisURL", service.Config{Store: service.StoreConfig{RedisURL: "http://127.0.0.1:1"}}, "redis URL"},
		{"BadRedisPrefix", service.Config{Store: service.StoreConfig{RedisURL: "redis://127.0.0.1:1", RedisPrefix: "a b"}}, "prefix"},
		{"BadFallback", service.Config{LimiterFallback: "open", Store: service.StoreConfig{RedisURL: "redis://127.0.0.1:1"}}, "fallback"},
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

// TestImport: both lists are checked before either is written, and a second import changes
// nothing.
func TestImport(t *testing.T) {
	srv := redistest.Start(t)
	sc := service.StoreConfig{RedisURL: srv.URL(), RedisPrefix: redistest.Prefix(t)}
	stores, err := service.OpenStores(sc)
	if err != nil {
		t.Fatal(err)
	}
	defer stores.Close()
	ctx := context.Background()
	_, err = stores.Import(ctx, ordertest.Fixture(), []order.Pet{{ID: 1, Status: order.PetSold}, {ID: 1, Status: order.PetSold}})
	var ce *service.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "pet 1: duplicate id") {
		t.Fatalf("import with a duplicate pet: %v", err)
	}
	if list, err := stores.Orders.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("after a refused import: %d orders, %v; want none written", len(list), err)
	}
	pets := []order.Pet{{ID: 1, Name: "Rex", Status: order.PetSold}}
	if n, err := stores.Import(ctx, ordertest.Fixture(), pets); err != nil || n == 0 {
		t.Fatalf("import: %d fields, %v", n, err)
	}
	if n, err := stores.Import(ctx, ordertest.Fixture(), pets); err != nil || n != 0 {
		t.Fatalf("second import: %d fields changed, %v; want 0", n, err)
	}
	if p, err := stores.Pets.Pet(ctx, 1); err != nil || p != pets[0] {
		t.Fatalf("pet: %+v %v", p, err)
	}

	embedded, err := service.OpenStores(service.StoreConfig{KeysFile: filepath.Join(t.TempDir(), "k.json"), CreateKeysFile: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := embedded.Import(ctx, ordertest.Fixture(), nil); err == nil {
		t.Fatal("the embedded stores imported")
	}
}
