package contractcheck_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/petstore/orderd/internal/contractcheck"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/plan"
	"github.com/petstore/orderd/internal/service/servicetest"
)

func TestRun(t *testing.T) {
	t.Run("TheRealServicePasses", func(t *testing.T) {
		cfg := servicetest.Embedded(t, ordertest.Fixture(), nil)
		key := servicetest.AddKey(t, cfg.Store, "checker", plan.Free, plan.Limits{})
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
