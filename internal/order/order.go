// Package order is the domain of the service: orders, their states and the store that keeps
// them. It imports no framework: every adapter depends on it, not on each other.
package order

import (
	"errors"
	"fmt"
	"time"
)

// Status is the state of an order.
type Status string

// The states of an order. Only StatusPending can change: to StatusCancelled.
const (
	StatusPending   Status = "pending"
	StatusShipped   Status = "shipped"
	StatusCancelled Status = "cancelled"
)

// Valid reports whether s is one of the three states.
func (s Status) Valid() bool {
	return s == StatusPending || s == StatusShipped || s == StatusCancelled
}

// Order is an order of the store. Its JSON form is the one of the API and of the data files.
type Order struct {
	ID       int64     `json:"id"`
	PetID    int64     `json:"petId"`
	Quantity int32     `json:"quantity"`
	ShipDate time.Time `json:"shipDate"`
	Complete bool      `json:"complete"`
	Status   Status    `json:"status"`
}

// Validate reports the first way in which o is not an order the service can hold: shipDate
// is sent in UTC as RFC 3339, which has room for the years 0000 to 9999 only.
func (o Order) Validate() error {
	switch {
	case o.ID < 0:
		return fmt.Errorf("order %d: id: must not be negative", o.ID)
	case o.PetID < 0:
		return fmt.Errorf("order %d: petId: must not be negative, got %d", o.ID, o.PetID)
	case o.Quantity < 0:
		return fmt.Errorf("order %d: quantity: must not be negative, got %d", o.ID, o.Quantity)
	case o.ShipDate.UTC().Year() < 0 || o.ShipDate.UTC().Year() > 9999:
		return fmt.Errorf("order %d: shipDate: %s is outside the years 0000 to 9999 in UTC", o.ID, o.ShipDate.Format(time.RFC3339Nano))
	case !o.Status.Valid():
		return fmt.Errorf("order %d: status: %q is not pending, shipped or cancelled", o.ID, o.Status)
	}
	return nil
}

// Cancel applies a cancel request to o: pending or cancelled becomes cancelled, shipped is
// refused with ErrAlreadyShipped. redisstore's cancel.lua restates it for Redis's one step.
func (o Order) Cancel() (Order, error) {
	if o.Status == StatusShipped {
		return o, ErrAlreadyShipped
	}
	o.Status = StatusCancelled
	return o, nil
}

// A Store's refusals; a failure of the storage itself is ErrUnavailable or ErrCorrupt.
var (
	ErrNotFound       = errors.New("no such order")
	ErrAlreadyShipped = errors.New("already shipped, so it cannot be cancelled")
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
