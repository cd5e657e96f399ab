package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/sqlitestore"
)

func TestMetricsAreExported(t *testing.T) {
	m := New()
	m.Request("listOrders", 200, 3*time.Millisecond)
	m.Request("listOrders", 200, 3*time.Millisecond)
	m.RateLimit("limited")
	m.Cancel("shipped")
	m.StoreError("cancelOrder")
	m.StoreFault("corrupt")
	m.Fallback()
	m.ForgottenCaller()
	m.ForgottenCaller()
	m.WebhookDelivery("delivered")
	m.WebhookDelivery("disabled")
	m.WebhookLag(2 * time.Second)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`orderd_http_requests_total{operation="listOrders",status="200"} 2`,
		`orderd_http_request_duration_seconds_count{operation="listOrders"} 2`,
		`orderd_http_request_duration_seconds_bucket{operation="listOrders",le="30"} 2`, // the write timeout
		`orderd_ratelimit_decisions_total{outcome="limited"} 1`,
		`orderd_cancellations_total{outcome="shipped"} 1`,
		`orderd_store_errors_total{operation="cancelOrder"} 1`,
		`orderd_store_faults_total{kind="corrupt"} 1`,
		`orderd_ratelimit_fallback_decisions_total 1`,
		`orderd_ratelimit_forgotten_callers_total 2`,
		`orderd_webhook_deliveries_total{outcome="delivered"} 1`,
		`orderd_webhook_deliveries_total{outcome="disabled"} 1`,
		`orderd_webhook_delivery_lag_seconds_bucket{le="2.5"} 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("no %s in:\n%s", want, body)
		}
	}
}

// TestCountersStartAtZero: the store's errors and faults and the webhook deliveries are
// exported at 0, with each label value they take, before their first event.
func TestCountersStartAtZero(t *testing.T) {
	rec := httptest.NewRecorder()
	New().Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	var want []string
	for _, op := range []string{"listOrders", "cancelOrder", "getPetById", "v2.findOrders", "v2.getOrder", "v2.cancelOrder", "v2.listEvents"} {
		want = append(want, `orderd_store_errors_total{operation="`+op+`"} 0`)
	}
	for _, kind := range []string{sqlitestore.FaultCorrupt, sqlitestore.FaultFull, sqlitestore.FaultReplaced, sqlitestore.FaultShmRemoved} {
		want = append(want, `orderd_store_faults_total{kind="`+kind+`"} 0`)
	}
	for _, outcome := range []string{"delivered", "failed", "disabled"} {
		want = append(want, `orderd_webhook_deliveries_total{outcome="`+outcome+`"} 0`)
	}
	for _, w := range want {
		if !strings.Contains(string(body), w) {
			t.Errorf("no %s in:\n%s", w, body)
		}
	}
}
