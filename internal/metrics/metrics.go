// Package metrics exports what the service does as Prometheus metrics on /metrics.
package metrics

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/petstore/orderd"
)

// Metrics holds the service's collectors in a registry of its own, so tests can make many.
type Metrics struct {
	registry   *prometheus.Registry
	latency    *prometheus.HistogramVec
	streams    prometheus.Gauge
	webhookLag prometheus.Histogram

	requests, rateLimit, cancels, storeErrors, storeFaults, events, webhooks *prometheus.CounterVec
	fallbacks, forgotten, trimmed                                            prometheus.Counter
}

// New registers the collectors, with the Go runtime's and the process's.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f := promauto.With(reg)
	counterVec := func(name, help string, labels ...string) *prometheus.CounterVec {
		return f.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	m := &Metrics{
		registry: reg,
		requests: counterVec("orderd_http_requests_total", "Requests answered, by operationId and status.", "operation", "status"),
		latency: f.NewHistogramVec(prometheus.HistogramOpts{
			Name: "orderd_http_request_duration_seconds", Help: "Time to answer a request, by operationId; for a stream of events, the time to open it.",
			// To the server's WriteTimeout (30 s): a slower answer reaches no client, and counts in +Inf.
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"operation"}),
		rateLimit:   counterVec("orderd_ratelimit_decisions_total", "Rate-limit decisions: admitted, limited, banned, unavailable.", "outcome"),
		cancels:     counterVec("orderd_cancellations_total", "Cancel requests by outcome: cancelled, already_cancelled, shipped, not_found, error.", "outcome"),
		storeErrors: counterVec("orderd_store_errors_total", "Operations that could not reach the store, by operationId.", "operation"),
		storeFaults: counterVec("orderd_store_faults_total", "Faults of the store that an operator must mend, by kind: corrupt, full, replaced, shm_removed. Each operation that meets one counts.", "kind"),
		fallbacks:   f.NewCounter(prometheus.CounterOpts{Name: "orderd_ratelimit_fallback_decisions_total", Help: "Decisions made by the instance's own limiter while Redis could not be reached."}),
		forgotten:   f.NewCounter(prometheus.CounterOpts{Name: "orderd_ratelimit_forgotten_callers_total", Help: "Callers without a key that the instance's own limiter forgot, least recently seen first, to stay within its cap."}),
		streams:     f.NewGauge(prometheus.GaugeOpts{Name: "orderd_event_streams_open", Help: "Streams of order events open on this instance."}),
		events:      counterVec("orderd_events_recorded_total", "Order events this instance recorded in the log, by type (its cancels; imports and other systems record theirs too).", "type"),
		trimmed:     f.NewCounter(prometheus.CounterOpts{Name: "orderd_events_trimmed_total", Help: "Order events dropped by the retention, by this instance's trims."}),
		webhooks:    counterVec("orderd_webhook_deliveries_total", "Webhook delivery attempts by this instance, by outcome: delivered, failed (retried, or the endpoint marked failing), disabled (410 Gone).", "outcome"),
		webhookLag: f.NewHistogram(prometheus.HistogramOpts{
			Name: "orderd_webhook_delivery_lag_seconds", Help: "Time from an order's change to its webhook's delivery, retries included.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400},
		}),
	}
	// Exported at 0 from the start, with every label value, so that a rate or an alert sees their first event.
	for vec, values := range map[*prometheus.CounterVec][]string{m.storeErrors: operations(),
		m.storeFaults: {"corrupt", "full", "replaced", "shm_removed"}, // sqlitestore's Fault kinds
		m.webhooks:    {"delivered", "failed", "disabled"}} {
		for _, v := range values {
			vec.WithLabelValues(v)
		}
	}
	return m
}

// operations are the contract's operations as api labels them: operationId, after version 1
// prefixed ("v2.findOrders").
var operations = sync.OnceValue(func() (labels []string) {
	for i, v := range orderd.Versions {
		doc, err := v.Load()
		if err != nil {
			return nil // api.New fails on it
		}
		prefix := map[bool]string{true: strings.TrimPrefix(v.Base, "/") + "."}[i > 0]
		for _, item := range doc.Paths.Map() {
			for _, op := range item.Operations() {
				labels = append(labels, prefix+op.OperationID)
			}
		}
	}
	return labels
})

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// The observers' calls (api.Observer, webhook.Observer, the limiters' and the service's), each counting in its metric.

func (m *Metrics) Request(operation string, status int, took time.Duration) {
	m.requests.WithLabelValues(operation, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(operation).Observe(took.Seconds())
}
func (m *Metrics) RateLimit(outcome string)       { m.rateLimit.WithLabelValues(outcome).Inc() }
func (m *Metrics) Cancel(outcome string)          { m.cancels.WithLabelValues(outcome).Inc() }
func (m *Metrics) StoreError(operation string)    { m.storeErrors.WithLabelValues(operation).Inc() }
func (m *Metrics) StoreFault(kind string)         { m.storeFaults.WithLabelValues(kind).Inc() }
func (m *Metrics) Fallback()                      { m.fallbacks.Inc() }
func (m *Metrics) ForgottenCaller()               { m.forgotten.Inc() }
func (m *Metrics) Streams(delta int)              { m.streams.Add(float64(delta)) }
func (m *Metrics) Trimmed(n int64)                { m.trimmed.Add(float64(n)) }
func (m *Metrics) WebhookDelivery(outcome string) { m.webhooks.WithLabelValues(outcome).Inc() }
func (m *Metrics) WebhookLag(d time.Duration)     { m.webhookLag.Observe(d.Seconds()) }
func (m *Metrics) Event(kind string)              { m.events.WithLabelValues(kind).Inc() }
