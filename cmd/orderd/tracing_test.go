package main

import (
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/petstore/orderd/internal/tracing/tracingtest"
)

// TestServeExportsTracesFromTheEnvironment: the real process, given only OTEL_* variables,
// sends its spans at SIGTERM as service orderd of its build's version.
func TestServeExportsTracesFromTheEnvironment(t *testing.T) {
	rcv := tracingtest.Start(t)
	db := filepath.Join(t.TempDir(), "o.db")
	key := firstLine(orderdProcess(t, "keys", "create", "--plan", "pro", "--db", db))
	cmd := orderdCommand("serve", "--addr", "127.0.0.1:0", "--shutdown-delay", "0", "--db", db)
	cmd.Env = append(cmd.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL, "OTEL_BSP_SCHEDULE_DELAY=60000") // only the flush at exit sends
	base, _ := startServing(t, cmd)
	if status, _ := request(t, "GET", base, "/v1/store/orders", key); status != 200 {
		t.Fatalf("status %d", status)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	spans, _ := rcv.Received()
	if !slices.ContainsFunc(spans, func(s *tracepb.Span) bool { return s.Name == "GET /v1/store/orders" }) {
		t.Fatalf("no span of the request among %v", spans)
	}
	want, _ := buildVersion()
	if name, version := rcv.Resource("service.name"), rcv.Resource("service.version"); name != "orderd" || version != want {
		t.Errorf("resource: service %v version %v, want orderd %s", name, version, want)
	}
}
