package api_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/order"
)

// TestSpansFollowTheHTTPConventions: a span is named "METHOD route" only when a route of
// the contract matched, else by the method alone (a path would make a name per id); a method
// HTTP does not define is "_OTHER", named "HTTP" in the span's name; url.scheme and url.path
// are set.
func TestSpansFollowTheHTTPConventions(t *testing.T) {
	spans := make(endedSpans, 10)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	h := newHarness(t, func(c *api.Config) { c.Tracer = tp.Tracer("test") })
	for _, tc := range []struct {
		method, path string
		status       int
		name, route  string
		attrs        map[string]string
	}{
		{"GET", "/v1/store/orders", 200, "GET /v1/store/orders", "/v1/store/orders",
			map[string]string{"http.request.method": "GET", "url.scheme": "http", "url.path": "/v1/store/orders"}},
		{"GET", "/nowhere", 404, "GET", "", map[string]string{"url.path": "/nowhere"}},
		// echo matches the cancel's route, whose one id segment this path is not.
		{"GET", "/v1/store/orders/1/items", 404, "GET", "", nil},
		{"FOO", "/v1/store/orders", 405, "HTTP /v1/store/orders", "/v1/store/orders",
			map[string]string{"http.request.method": "_OTHER", "http.request.method_original": "FOO"}},
	} {
		res, err := h.srv.Client().Do(h.request(t, tc.method, tc.path, "Authorization", "Bearer "+h.key))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.status {
			t.Fatalf("%s %s: %d, want %d", tc.method, tc.path, res.StatusCode, tc.status)
		}
		s := spans.next(t)
		attrs := attributesOf(s)
		if s.Name() != tc.name || attrs["http.route"] != tc.route {
			t.Errorf("%s %s: span %q, http.route %q; want %q, %q", tc.method, tc.path, s.Name(), attrs["http.route"], tc.name, tc.route)
		}
		for k, v := range tc.attrs {
			if attrs[k] != v {
				t.Errorf("%s %s: %s = %q, want %q", tc.method, tc.path, k, attrs[k], v)
			}
		}
	}
}

// TestAClientThatHangsUpIsNoServerError: the request a client gave up on is answered 503
// (errors.go), but its span is no error: the server did not fail.
func TestAClientThatHangsUpIsNoServerError(t *testing.T) {
	spans := make(endedSpans, 10)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reading := make(chan struct{}, 1)
	h := newHarness(t, func(c *api.Config) {
		c.Tracer = tp.Tracer("test")
		c.Orders = blockedOrders{Store: c.Orders, reading: reading}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req := h.request(t, "GET", "/v1/store/orders", "Authorization", "Bearer "+h.key).WithContext(ctx)
		if res, err := h.srv.Client().Do(req); err == nil {
			res.Body.Close()
		}
	}()
	select {
	case <-reading:
	case <-time.After(10 * time.Second):
		t.Fatal("the list never read its store")
	}
	cancel()
	<-done
	s := spans.next(t)
	if s.Status().Code == codes.Error || attributesOf(s)["http.response.status_code"] != "503" {
		t.Fatalf("span %q: status %v, attributes %v; want a 503 that is no error", s.Name(), s.Status(), s.Attributes())
	}
}

// blockedOrders is a store whose reads wait for their request to end, telling reading.
type blockedOrders struct {
	order.Store
	reading chan struct{}
}

func (b blockedOrders) Version(ctx context.Context) (uint64, error) {
	b.reading <- struct{}{}
	<-ctx.Done()
	return 0, ctx.Err()
}

func (b blockedOrders) List(ctx context.Context) ([]order.Order, error) {
	_, err := b.Version(ctx)
	return nil, err
}

// endedSpans is a span processor that passes on each span as it ends.
type endedSpans chan sdktrace.ReadOnlySpan

func (e endedSpans) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (e endedSpans) OnEnd(s sdktrace.ReadOnlySpan)                   { e <- s }
func (e endedSpans) Shutdown(context.Context) error                  { return nil }
func (e endedSpans) ForceFlush(context.Context) error                { return nil }

func (e endedSpans) next(t *testing.T) sdktrace.ReadOnlySpan {
	t.Helper()
	select {
	case s := <-e:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("no span ended within 10 s")
		return nil
	}
}

func attributesOf(s sdktrace.ReadOnlySpan) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}
