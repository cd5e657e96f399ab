package service_test

import (
	"bytes"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/redistest"
	"github.com/petstore/orderd/internal/service"
	"github.com/petstore/orderd/internal/service/servicetest"
	"github.com/petstore/orderd/internal/tracing/tracingtest"
)

// clearOTEL unsets, for the test, the variables that turn tracing on or off: the machine's own
// must not decide it.
func clearOTEL(t *testing.T) {
	for _, v := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		t.Setenv(v, "")
	}
}

const (
	clientTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientParent = "00f067aa0ba902b7"
)

// tracedRequest serves cfg until the subtest ends (Close flushes the spans), sends one request
// carrying the client's traceparent, and returns the access line's trace_id ("" when none).
func tracedRequest(t *testing.T, cfg service.Config, key string) (traceID any) {
	return tracedRequestLogged(t, cfg, key, new(apitest.Log))
}

func tracedRequestLogged(t *testing.T, cfg service.Config, key string, log *apitest.Log) (traceID any) {
	t.Run("serve", func(t *testing.T) {
		cfg.Logger, cfg.AccessLog = slog.New(slog.NewJSONHandler(log, nil)), log
		svc := servicetest.Run(t, cfg)
		req, _ := http.NewRequest(http.MethodGet, svc.URL()+"/v1/store/orders", nil)
		req.Header.Set("Traceparent", "00-"+clientTrace+"-"+clientParent+"-01")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		ct := apitest.Load(t)
		res, _ := ct.Do(t, http.DefaultClient, req)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("status %d", res.StatusCode)
		}
		for _, rec := range log.At(t, "INFO") {
			if rec["msg"] == "request" {
				traceID = rec["trace_id"]
			}
		}
		// An error answer, with no traceparent and no key: a span of its own too.
		req, _ = http.NewRequest(http.MethodGet, svc.URL()+"/v1/store/orders", nil)
		if res, _ := ct.Do(t, http.DefaultClient, req); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("without a key: status %d", res.StatusCode)
		}
	})
	return traceID
}

// TestTracing: with an OTLP endpoint in the environment, a request is a server span under
// the client's traceparent, named by its route, sent to the collector; in Redis mode go-redis's
// spans, or the SQLite file's queries, are its children. The access line carries the trace id.
func TestTracing(t *testing.T) {
	srv := redistest.Start(t)
	for name, sc := range map[string]service.StoreConfig{
		"SQLite": {},
		"Redis":  {RedisURL: srv.URL(), RedisPrefix: redistest.Prefix(t)},
	} {
		t.Run(name, func(t *testing.T) {
			clearOTEL(t)
			rcv := tracingtest.Start(t)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
			t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
			t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
			cfg := servicetest.Embedded(t, ordertest.Fixture(), nil)
			if sc.RedisURL != "" {
				cfg.Store = sc
			}
			key := servicetest.AddKey(t, cfg.Store, "traced", order.Pro, order.Limits{})
			if got := tracedRequest(t, cfg, key); got != clientTrace {
				t.Errorf("access line's trace_id %v, want %s", got, clientTrace)
			}
			spans, _ := rcv.Received()
			var server, refused *tracepb.Span
			for _, s := range spans {
				switch {
				case s.Kind != tracepb.Span_SPAN_KIND_SERVER:
				case tracingtest.Attr(s, "http.response.status_code") == int64(http.StatusUnauthorized):
					refused = s
				default:
					server = s
				}
			}
			if server == nil || refused == nil {
				t.Fatalf("no server span for each request among %d", len(spans))
			}
			if hex.EncodeToString(refused.TraceId) == clientTrace || tracingtest.Attr(refused, "orderd.caller") != "address" ||
				tracingtest.Attr(refused, "orderd.rate_limit") != "admitted" || refused.Name != "GET /v1/store/orders" {
				t.Errorf("the 401's span: %q in trace %x, caller %v, rate limit %v", refused.Name, refused.TraceId,
					tracingtest.Attr(refused, "orderd.caller"), tracingtest.Attr(refused, "orderd.rate_limit"))
			}
			if hex.EncodeToString(server.TraceId) != clientTrace || hex.EncodeToString(server.ParentSpanId) != clientParent {
				t.Errorf("span in trace %x under %x, want the traceparent's", server.TraceId, server.ParentSpanId)
			}
			if server.Name != "GET /v1/store/orders" {
				t.Errorf("span name %q", server.Name)
			}
			want := map[string]any{"http.request.method": "GET", "http.route": "/v1/store/orders",
				"http.response.status_code": int64(200), "orderd.caller": "key", "orderd.rate_limit": "admitted"}
			for k, v := range want {
				if got := tracingtest.Attr(server, k); got != v {
					t.Errorf("%s = %v, want %v", k, got, v)
				}
			}
			// The request's store work: go-redis's spans, or the SQLite file's queries (the
			// list's first read of the orders among them), as client spans under the request's.
			var children []string
			for _, s := range spans {
				if bytes.Equal(s.TraceId, server.TraceId) && bytes.Equal(s.ParentSpanId, server.SpanId) && s.Kind == tracepb.Span_SPAN_KIND_CLIENT {
					children = append(children, s.Name)
					if sc.RedisURL == "" && tracingtest.Attr(s, "db.system.name") != "sqlite" {
						t.Errorf("span %q: db.system.name %v, want sqlite", s.Name, tracingtest.Attr(s, "db.system.name"))
					}
				}
			}
			if len(children) == 0 {
				t.Errorf("no store span under the request's among %d spans", len(spans))
			}
			if sc.RedisURL == "" && !slices.Contains(children, "SELECT orders") {
				t.Errorf("the list's spans %q, want a SELECT orders among them", children)
			}
		})
	}
}

// TestTracingOff: an endpoint alone does nothing when the exporter is none or the SDK is
// disabled: nothing reaches the collector, the access line has no trace_id.
func TestTracingOff(t *testing.T) {
	for name, env := range map[string][2]string{
		"unset":    {"OTEL_TRACES_EXPORTER", ""},
		"none":     {"OTEL_TRACES_EXPORTER", "none"},
		"disabled": {"OTEL_SDK_DISABLED", "true"},
	} {
		t.Run(name, func(t *testing.T) {
			clearOTEL(t)
			rcv := tracingtest.Start(t)
			if name != "unset" {
				t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
			}
			t.Setenv(env[0], env[1])
			cfg := servicetest.Embedded(t, ordertest.Fixture(), nil)
			key := servicetest.AddKey(t, cfg.Store, "untraced", order.Pro, order.Limits{})
			if got := tracedRequest(t, cfg, key); got != nil {
				t.Errorf("access line's trace_id %v, want none", got)
			}
			if spans, posts := rcv.Received(); posts != 0 {
				t.Errorf("%d exports (%d spans), want none", posts, len(spans))
			}
		})
	}
}

// TestTracingExportFailureIsLogged: a collector that refuses the spans is a warning line in
// the service's JSON log, not the SDK's own plain stderr.
func TestTracingExportFailureIsLogged(t *testing.T) {
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusBadRequest) // not one the exporter retries
	}))
	t.Cleanup(refusing.Close)
	clearOTEL(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", refusing.URL)
	cfg := servicetest.Embedded(t, ordertest.Fixture(), nil)
	key := servicetest.AddKey(t, cfg.Store, "refused", order.Pro, order.Limits{})
	var log apitest.Log
	tracedRequestLogged(t, cfg, key, &log)
	for _, rec := range log.At(t, "WARN") {
		if rec["msg"] == "tracing: spans not sent" {
			return
		}
	}
	t.Errorf("no warning of the refused export in %s", log.String())
}
