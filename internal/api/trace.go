package api

import (
	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/petstore/orderd/internal/auth"
)

// traced is the step before observe when tracing is on (New adds it only then): a server span
// per request, a child of the client's traceparent, so that every answer, errors included, is
// in one. It names the caller's kind and the rate-limit outcome, never the key.
func traced(tr trace.Tracer) echo.MiddlewareFunc {
	prop := otel.GetTextMapPropagator() // W3C trace context, as tracing.Start installs it
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			route := routeOf(c)
			ctx := prop.Extract(req.Context(), propagation.HeaderCarrier(req.Header))
			ctx, span := tr.Start(ctx, req.Method+" "+route, trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(attribute.String("http.request.method", req.Method), attribute.String("http.route", route)))
			defer span.End()
			c.SetRequest(req.WithContext(ctx))
			err := next(c) // observe has answered any error
			status := c.Response().Status
			span.SetAttributes(attribute.Int("http.response.status_code", status))
			if caller := auth.CallerFrom(c.Request().Context()); caller != nil && caller.Key != nil {
				span.SetAttributes(attribute.String("orderd.caller", "key"))
			} else if caller != nil {
				span.SetAttributes(attribute.String("orderd.caller", "address"))
			}
			if ex, _ := c.Get(exchangeKey).(*exchange); ex != nil && ex.rateLimit != "" {
				span.SetAttributes(attribute.String("orderd.rate_limit", ex.rateLimit))
			}
			if status >= 500 {
				span.SetStatus(codes.Error, "")
			}
			return err
		}
	}
}
