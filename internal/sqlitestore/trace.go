package sqlitestore

import (
	"context"
	"errors"

	"github.com/petstore/orderd/internal/order"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Trace makes the file's work for a request a child span of the request's: each read that
// queries the file (not one the read cache answers) and each cancel, named by operation and
// table ("SELECT orders") as OpenTelemetry's database conventions name them. Call it before
// serving. Without it (tracing off) a span costs a nil check.
func (db *DB) Trace(tp trace.TracerProvider) {
	db.tracer = tp.Tracer("github.com/petstore/orderd/internal/sqlitestore")
}

// span starts the span of op (an SQL verb) on table, and returns what ends it with the work's error.
func (db *DB) span(ctx context.Context, op, table string) (context.Context, func(error)) {
	if db.tracer == nil {
		return ctx, func(error) {}
	}
	ctx, span := db.tracer.Start(ctx, op+" "+table, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(semconv.DBSystemNameSQLite, semconv.DBOperationName(op), semconv.DBCollectionName(table)))
	return ctx, func(err error) {
		// Not found or not cancellable is the store's answer; only a fault is the span's error.
		if errors.Is(err, order.ErrUnavailable) || errors.Is(err, order.ErrCorrupt) {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}
