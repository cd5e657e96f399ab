// Package store names the ways the service's storage can fail, and holds a request's Trip.
package order

import "errors"

var (
	// ErrUnavailable wraps every failure of the storage itself (no answer in time, a refused
	// connection, a reply that it cannot work now): 503. A request's cancellation is never one.
	ErrUnavailable = errors.New("store unavailable")
	// ErrCorrupt wraps a record the storage holds in a form the service cannot use. Its
	// message names the record; it is answered 500, because retrying will not help.
	ErrCorrupt = errors.New("corrupt record")
)

// Fault is a failure of the storage that retrying does not mend (a corrupt or replaced file)
// or only an operator can end (a full disk). Err wraps ErrCorrupt or ErrUnavailable and names
// the file, for the log; Public says what it is without paths, for clients.
type Fault struct {
	Kind   string // a word for metrics and logs: corrupt, full, replaced…
	Public string
	Err    error
	// Lasting: not ready until an operator mends the storage and restarts the service.
	Lasting bool
}

func (f *Fault) Error() string { return f.Err.Error() }
func (f *Fault) Unwrap() error { return f.Err }
