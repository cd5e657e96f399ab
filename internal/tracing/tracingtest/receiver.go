// Package tracingtest is an OTLP/HTTP trace receiver for tests, as a collector serves it.
package tracingtest

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Receiver accepts POST /v1/traces (protobuf, gzipped or not) and keeps what it was sent.
type Receiver struct {
	*httptest.Server
	mu        sync.Mutex
	spans     []*tracepb.Span
	resources []*commonpb.KeyValue
	posts     int
}

// Start serves a Receiver until the test ends; its URL is an OTEL_EXPORTER_OTLP_ENDPOINT.
func Start(tb testing.TB) *Receiver {
	r := &Receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve(tb)))
	tb.Cleanup(r.Close)
	return r
}

func (r *Receiver) serve(tb testing.TB) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
			tb.Errorf("receiver: %s %s", req.Method, req.URL.Path)
			http.NotFound(w, req)
			return
		}
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				tb.Errorf("receiver: %v", err)
				return
			}
			body = zr
		}
		raw, err := io.ReadAll(body)
		var export coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(raw, &export)
		}
		if err != nil {
			tb.Errorf("receiver: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.posts++
		for _, rs := range export.ResourceSpans {
			r.resources = append(r.resources, rs.GetResource().GetAttributes()...)
			for _, ss := range rs.ScopeSpans {
				r.spans = append(r.spans, ss.Spans...)
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}
}

// Received returns the spans received so far and the number of exports that sent them.
func (r *Receiver) Received() ([]*tracepb.Span, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.spans, r.posts
}

// Resource returns the value of the resource attribute key of the spans received, or nil.
func (r *Receiver) Resource(key string) any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return value(r.resources, key)
}

// Attr returns the value of span s's attribute key (a string or an int64), or nil.
func Attr(s *tracepb.Span, key string) any { return value(s.Attributes, key) }

func value(kvs []*commonpb.KeyValue, key string) any {
	for _, kv := range kvs {
		if kv.Key == key {
			switch v := kv.Value.Value.(type) {
			case *commonpb.AnyValue_IntValue:
				return v.IntValue
			case *commonpb.AnyValue_StringValue:
				return v.StringValue
			}
		}
	}
	return nil
}
