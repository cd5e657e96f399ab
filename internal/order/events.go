package order

import (
	"context"
	"errors"
	"time"
)

// EventType says what a change did to an order.
type EventType string

// The types of events. A change that sets the status to cancelled or shipped is that event;
// any other change of an existing order is EventUpdated.
const (
	EventCreated   EventType = "order.created"
	EventCancelled EventType = "order.cancelled"
	EventShipped   EventType = "order.shipped"
	EventUpdated   EventType = "order.updated"
)

// EventTypes are every type, in the order the contract lists them.
var EventTypes = []EventType{EventCreated, EventCancelled, EventShipped, EventUpdated}

// Event is one change to one order, recorded by the store in the same atomic step as the change.
type Event struct {
	// ID is the event's position in the log: opaque to clients, and each store's own form
	// (SQLite: a decimal row id; Redis: a stream id). Later events have later positions.
	ID    string
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
	// Last is the position the page read up to: the next page reads after it. When the page
	// examined nothing it is the query's After, or, for an After of "", the log's newest.
	Last string
	// More is true when the page stopped at its limit: more events may follow now.
	More bool
}

// Retention bounds the log: events older than MaxAge, and all but the newest MaxCount, may be
// dropped. Zero leaves that bound off.
type Retention struct {
	MaxAge   time.Duration
	MaxCount int64
}

// ErrEventsExpired refuses an After the log cannot read on from: an event after it was
// dropped by the retention, or the position is not one this log has reached.
var ErrEventsExpired = errors.New("the events after that position are no longer kept")

// EventLog is the log of every change to the orders, kept by the store that holds them, whoever
// writes: the change and its event are one atomic step, so a change is never without its event,
// nor an event without its change. A change that changes nothing records nothing.
type EventLog interface {
	// Events reads the log after q.After, in order, examining at most q.Limit events.
	// Refusal: ErrEventsExpired.
	Events(ctx context.Context, q EventQuery) (EventPage, error)
	// LastEventID is the position of the newest event recorded, or the log's beginning when
	// none is: every change made after the call has an event after it.
	LastEventID(ctx context.Context) (string, error)
	// WaitForEvents returns nil when the log may hold an event after the position after (it
	// may return early: read to find out), or ctx's error once ctx ends.
	WaitForEvents(ctx context.Context, after string) error
	// Trim drops what r no longer keeps, and returns how many events it dropped.
	Trim(ctx context.Context, r Retention) (int64, error)
}
