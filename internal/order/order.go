// Package order is the domain of the service: orders, pets, keys, and the stores' interfaces.
package order

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Status is the state of an order. Only StatusPending can change: to StatusCancelled.
type Status string

const (
	StatusPending   Status = "pending"
	StatusShipped   Status = "shipped"
	StatusCancelled Status = "cancelled"
)

// Valid reports whether s is one of the three states.
func (s Status) Valid() bool { return s == StatusPending || s == StatusShipped || s == StatusCancelled }

// Order is an order of the store.
type Order struct {
	ID       int64     `json:"id"`
	PetID    int64     `json:"petId"`
	Quantity int32     `json:"quantity"`
	ShipDate time.Time `json:"shipDate"`
	Complete bool      `json:"complete"`
	Status   Status    `json:"status"`
}

// Validate reports the first way in which o is not an order the service can hold (UTC RFC 3339: years 0000-9999).
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

// Cancel returns o cancelled, or ErrAlreadyShipped (redisstore's cancel.lua restates it).
func (o Order) Cancel() (Order, error) {
	if o.Status == StatusShipped {
		return o, ErrAlreadyShipped
	}
	o.Status = StatusCancelled
	return o, nil
}

// A Store's refusals, and what its failures wrap.
var (
	ErrNotFound       = errors.New("no such order")
	ErrAlreadyShipped = errors.New("already shipped, so it cannot be cancelled")
	ErrUnavailable    = errors.New("store unavailable") // 503 (never a request's cancellation)
	ErrCorrupt        = errors.New("corrupt record")    // a record the service cannot use: 500
)

// Fault is a failure that retrying does not mend (a corrupt or replaced file) or only an operator ends (a full disk).
type Fault struct {
	Kind    string // a word for metrics and logs: corrupt, full, replaced…
	Public  string // what it is, without paths, for clients
	Err     error  // wraps ErrCorrupt or ErrUnavailable, names the file
	Lasting bool   // not ready until an operator mends the storage and restarts the service
}

func (f *Fault) Error() string { return f.Err.Error() }
func (f *Fault) Unwrap() error { return f.Err }

// PetStatus is the availability of a pet.
type PetStatus string

const (
	PetAvailable PetStatus = "available"
	PetPending   PetStatus = "pending"
	PetSold      PetStatus = "sold"
)

// Pet is an animal of the store, served only by the deprecated pets operation.
type Pet struct {
	ID     int64     `json:"id"`
	Name   string    `json:"name"`
	Status PetStatus `json:"status"`
}

// The maxLengths, in characters, of Pet.name and Order.shipDate in openapi.yaml.
const MaxPetNameLength, MaxShipDateLength = 200, 64

// Validate reports the first way in which p is not a pet the service can hold.
func (p Pet) Validate() error {
	switch {
	case p.ID < 0:
		return fmt.Errorf("pet %d: id: must not be negative", p.ID)
	case utf8.RuneCountInString(p.Name) > MaxPetNameLength:
		return fmt.Errorf("pet %d: name: %d characters, more than %d", p.ID, utf8.RuneCountInString(p.Name), MaxPetNameLength)
	case p.Status != PetAvailable && p.Status != PetPending && p.Status != PetSold:
		return fmt.Errorf("pet %d: status: %q is not available, pending or sold", p.ID, p.Status)
	}
	return nil
}

// ErrPetNotFound is returned by PetStore.Pet for an unknown id.
var ErrPetNotFound = errors.New("no such pet")

// PetStore keeps the pets, safe for concurrent use.
type PetStore interface {
	Pet(ctx context.Context, id int64) (Pet, error)
}

// EventType says what a change did to an order: to cancelled or shipped is that event, any other EventUpdated.
type EventType string

const (
	EventCreated   EventType = "order.created"
	EventCancelled EventType = "order.cancelled"
	EventShipped   EventType = "order.shipped"
	EventUpdated   EventType = "order.updated"
)

// EventTypes are every type, in the order the contract lists them.
var EventTypes = []EventType{EventCreated, EventCancelled, EventShipped, EventUpdated}

// Event is one change to one order, recorded in the same atomic step as the change.
type Event struct {
	ID    string // the position in the log, in the store's own form: later events, later ids
	Type  EventType
	Time  time.Time // the store's clock when the change was made
	Order Order     // the order as the change left it
}

// EventQuery asks for a page of the log.
type EventQuery struct {
	After string      // the position to read after; "" reads from the oldest event kept
	Types []EventType // the types to return; none returns every type
	Limit int         // how many events of the log to examine, at least 1
}

// EventPage is a page of the log: the events examined whose type was asked for.
type EventPage struct {
	Events []Event
	Last   string // read up to: the query's After when nothing was examined (or the newest, for "")
	More   bool   // the page stopped at its limit
}

// Retention bounds the log: events older than MaxAge, and all but the newest MaxCount, may be dropped (0: no bound).
type Retention struct {
	MaxAge   time.Duration
	MaxCount int64
}

// ErrEventsExpired refuses an After the log cannot read on from: an event after it was dropped, or it is unknown.
var ErrEventsExpired = errors.New("the events after that position are no longer kept")

// EventLog is the log of every change to the orders, each recorded atomically with its change.
type EventLog interface {
	Events(ctx context.Context, q EventQuery) (EventPage, error) // after q.After, or ErrEventsExpired
	LastEventID(ctx context.Context) (string, error)             // the newest event's position, or the beginning
	WaitForEvents(ctx context.Context, after string) error       // nil once an event may follow after, or ctx's error
	Trim(ctx context.Context, r Retention) (int64, error)        // drops what r no longer keeps; how many it dropped
}
