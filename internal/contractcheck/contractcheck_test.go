package contractcheck_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/contractcheck"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/plan"
	"github.com/petstore/orderd/internal/service"
	"github.com/petstore/orderd/internal/service/servicetest"
)

func TestRun(t *testing.T) {
	t.Run("TheRealServicePasses", func(t *testing.T) {
		cfg := service.DefaultConfig()
		cfg.Store.KeysFile = filepath.Join(t.TempDir(), "keys.json")
		cfg.Store.CreateKeysFile = true
		cfg.Store.Orders = ordertest.Fixture()
		key, rec, _ := auth.NewKey("checker", plan.Free, plan.Limits{}, time.Now())
		stores, err := service.OpenStores(cfg.Store)
		if err != nil {
			t.Fatal(err)
		}
		if err := stores.Keys.Add(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		stores.Close()
		svc := servicetest.Run(t, cfg)
		c, err := contractcheck.New(contractcheck.Config{Base: svc.URL(), Key: key})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := c.Run(context.Background(), &out); err != nil || !strings.HasSuffix(out.String(), "12 passed, 0 failed\n") {
			t.Fatalf("%v\n%s", err, out.String())
		}
	})
	t.Run("ErrFailed", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "nope", http.StatusTeapot)
		}))
		defer srv.Close()
		c, err := contractcheck.New(contractcheck.Config{Base: srv.URL + "/v1/", Key: "osk_x"})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := c.Run(context.Background(), &out); !errors.Is(err, contractcheck.ErrFailed) || !strings.HasSuffix(out.String(), "0 passed, 11 failed\n") {
			t.Fatalf("%v\n%s", err, out.String())
		}
	})
}
