// Package store names the ways the storage behind any store of the service can fail: the
// order, pet and key stores and the rate limiter alike, in every implementation. The HTTP
// layer maps each to one answer in its one error table. It also holds a request's Trip:
// what the request's first round trip to shared storage read for its later steps.
package store

import "errors"

var (
	// ErrUnavailable wraps every failure of the storage itself: no answer in time, a refused
	// connection, or a reply that says the storage cannot do the work now (loading, read-only,
	// out of memory…). It is answered 503 with Retry-After. A request's own cancellation is
	// never one.
	ErrUnavailable = errors.New("store unavailable")
	// ErrCorrupt wraps a record the storage holds in a form the service cannot use (written
	// by another system, or damaged). Its message names the record; it is answered 500, and
	// logged, because retrying will not help.
	ErrCorrupt = errors.New("corrupt record")
)
