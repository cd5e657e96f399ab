package service_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/service/servicetest"
	"github.com/petstore/orderd/internal/sqlitestore/sqlitetest"
)

// TestCorruptFileIsAFault: a file with a damaged page of the orders table is no outage. The
// requests that read the page answer 500 internal_error, the others are served; /readyz
// answers 503 naming the cause without the path; one error line names the file and
// SQLite's message however many requests meet it; each is counted in
// orderd_store_faults_total.
func TestCorruptFileIsAFault(t *testing.T) {
	orders := make([]order.Order, 2000)
	ship := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	for i := range orders {
		orders[i] = order.Order{ID: int64(i + 1), PetID: 1, Quantity: 1, ShipDate: ship, Status: order.StatusPending}
	}
	cfg := servicetest.Embedded(t, orders, nil)
	key := servicetest.AddKey(t, cfg.Store, "test", order.Enterprise, order.Limits{PerMinute: 1000, PerDay: 100000})
	sqlitetest.DamageLeafPage(t, cfg.Store.DB, "orders")
	var logs apitest.Log
	cfg.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	svc := servicetest.Run(t, cfg)
	contract := apitest.Load(t)
	do := func(path string) (*http.Response, []byte) {
		t.Helper()
		method := "GET"
		if m, p, ok := strings.Cut(path, " "); ok {
			method, path = m, p
		}
		req, _ := http.NewRequest(method, svc.URL()+path, nil)
		if strings.HasPrefix(path, "/v") {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		return contract.Do(t, http.DefaultClient, req)
	}

	if res, body := do("/readyz"); res.StatusCode != 200 {
		t.Fatalf("/readyz before the damaged page is read: %d %s", res.StatusCode, body)
	}
	for range 5 {
		if res, body := do("/v1/store/orders"); res.StatusCode != 500 || !strings.Contains(string(body), `"code":"internal_error"`) {
			t.Fatalf("list of a file with a damaged page: %d %s; want 500 internal_error", res.StatusCode, body)
		}
	}
	if res, body := do("DELETE /v1/store/orders/1"); res.StatusCode != 204 {
		t.Errorf("cancel of an order on a sound page: %d %s; want 204", res.StatusCode, body)
	}
	res, body := do("/readyz")
	if res.StatusCode != 503 || !strings.Contains(string(body), "the database file is corrupt") || strings.Contains(string(body), cfg.Store.DB) {
		t.Errorf("/readyz after: %d %s; want 503 naming the cause, not the path", res.StatusCode, body)
	}

	errs := logs.At(t, "ERROR")
	if len(errs) != 1 || errs[0]["kind"] != "corrupt" ||
		!strings.Contains(errs[0]["error"].(string), cfg.Store.DB) || !strings.Contains(errs[0]["error"].(string), "malformed") {
		t.Errorf("error lines: %v; want one of the corrupt file, naming it and SQLite's message", errs)
	}
	// Six: the five lists, and the cancel's read of the orders, which meets the page before
	// the cancel goes to the store for its one order.
	if res, body := do("/metrics"); !strings.Contains(string(body), `orderd_store_faults_total{kind="corrupt"} 6`) {
		t.Errorf("/metrics: %d, no count of 6 corrupt faults:\n%s", res.StatusCode, grepLines(body, "orderd_store_faults"))
	}
}

func grepLines(body []byte, s string) string {
	var out []string
	for _, line := range strings.Split(string(body), "\n") {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
