// Package tracing turns OpenTelemetry tracing on from its standard environment variables
// alone: no flag of ours, so a deployment configures it as it configures every other service.
package tracing

import (
	"cmp"
	"context"
	"log/slog"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// Provider is the installed tracer provider, or nil when tracing is off.
type Provider = sdktrace.TracerProvider

// Start installs, when the environment asks for traces (an OTLP endpoint or
// OTEL_TRACES_EXPORTER=otlp; not OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none), an
// OTLP/HTTP exporter in batches, with W3C trace context and baggage; the SDK reads the rest of
// OTEL_* itself (endpoint, batching, sampler). Off: nil, nil.
func Start(ctx context.Context, version string, log *slog.Logger) (*Provider, error) {
	exporter := strings.ToLower(os.Getenv("OTEL_TRACES_EXPORTER"))
	endpoint := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") + os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") || exporter == "none" || exporter != "otlp" && endpoint == "" {
		return nil, nil
	}
	exp, err := otlptracehttp.New(ctx)
	// Later detectors win: the environment's attributes (OTEL_SERVICE_NAME first) over ours.
	res, resErr := resource.New(ctx, resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName("orderd"), semconv.ServiceVersion(version)), resource.WithFromEnv())
	if err = cmp.Or(err, resErr); err != nil {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	// An export that failed is a warning line like every other, not the SDK's plain stderr.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("tracing: spans not sent", slog.String("error", err.Error()))
	}))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return tp, nil
}
