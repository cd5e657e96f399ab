package api

import (
	"strconv"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// traced is the step before observe when tracing is on: a server span per request, a child of
// the client's traceparent, so that every answer, errors included, is in one. It names the
// caller's kind and admit's outcome, never the key. Names and attributes follow
// OpenTelemetry's HTTP server conventions: "METHOD route", or the method alone when no route
// matched (a path would make a name per id), and "_OTHER" for a method HTTP does not define,
// which a client could otherwise make names of.
func traced(tr trace.Tracer) echo.MiddlewareFunc {
	prop := otel.GetTextMapPropagator() // W3C trace context, as tracing.Start installs it
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			method, name := req.Method, req.Method
			attrs := []attribute.KeyValue{attribute.String("url.scheme", c.Scheme()), attribute.String("url.path", req.URL.Path)}
			if !knownMethods[method] {
				method, name = "_OTHER", "HTTP"
				attrs = append(attrs, attribute.String("http.request.method_original", req.Method))
			}
			attrs = append(attrs, attribute.String("http.request.method", method))
			if route := c.Path(); route != "" && route != "/*" && matchesTemplate(c) {
				name += " " + route
				attrs = append(attrs, attribute.String("http.route", route))
			}
			ctx := prop.Extract(req.Context(), propagation.HeaderCarrier(req.Header))
			ctx, span := tr.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
			defer span.End()
			c.SetRequest(req.WithContext(ctx))
			err := next(c) // observe has answered any error
			status := c.Response().Status
			span.SetAttributes(attribute.Int("http.response.status_code", status))
			if ex := exchangeOf(c.Request().Context()); ex != nil {
				switch {
				case ex.key != nil:
					span.SetAttributes(attribute.String("orderd.caller", "key"))
				case ex.addr != "":
					span.SetAttributes(attribute.String("orderd.caller", "address"))
				}
				if ex.rateLimit != "" {
					span.SetAttributes(attribute.String("orderd.rate_limit", ex.rateLimit))
				}
			}
			// A client that hung up is answered 503, but is no fault of the server's.
			if status >= 500 && ctx.Err() == nil {
				span.SetStatus(codes.Error, "")
				span.SetAttributes(attribute.String("error.type", strconv.Itoa(status)))
			}
			return err
		}
	}
}

// knownMethods are the methods of RFC 9110 and PATCH (RFC 5789), the set the conventions name.
var knownMethods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "DELETE": true,
	"CONNECT": true, "OPTIONS": true, "TRACE": true, "PATCH": true}
