package api

import "time"

// Observer is told what the service does, for metrics. The HTTP layer knows only this
// interface; internal/metrics implements it with Prometheus.
type Observer interface {
	// Request is one answered request: its operation (labelOf: the operationId, "v2." and
	// the operationId under /v2, the route itself for /healthz, /readyz, /metrics and /docs,
	// else "unknown"), status and duration.
	Request(operation string, status int, took time.Duration)
	// RateLimit is one decision: admitted, limited, banned or unavailable.
	RateLimit(outcome string)
	// Cancel is one cancel request's outcome: cancelled, already_cancelled, shipped,
	// not_found or error.
	Cancel(outcome string)
	// StoreError is a store that could not be reached during an operation.
	StoreError(operation string)
}

type noObserver struct{}

func (noObserver) Request(string, int, time.Duration) {}
func (noObserver) RateLimit(string)                   {}
func (noObserver) Cancel(string)                      {}
func (noObserver) StoreError(string)                  {}
