package webhook

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/petstore/orderd/internal/order"
)

// Create registers an endpoint for rawURL and types, delivered the events after the log's
// newest: those of changes made from now on.
func Create(ctx context.Context, s Store, log order.EventLog, rawURL string, types []order.EventType, now time.Time) (Endpoint, error) {
	e, err := NewEndpoint(rawURL, types, "", now)
	if err != nil {
		return Endpoint{}, err
	}
	if e.Position, err = log.LastEventID(ctx); err != nil {
		return Endpoint{}, err
	}
	return e, s.Update(ctx, e.ID, func(stored *Endpoint) error {
		if stored.ID != "" {
			return fmt.Errorf("webhook %s: the id is taken", e.ID)
		}
		*stored = e
		return nil
	})
}

// Delete removes the endpoint id, though an instance holds its lease: its next write finds
// none. Refusal: ErrNotFound.
func Delete(ctx context.Context, s Store, id string) error {
	return update(ctx, s, id, func(e *Endpoint) error {
		*e = Endpoint{}
		return nil
	})
}

// Backlog is how far an endpoint is behind the log: the events of its types after its position.
type Backlog struct {
	Events  int       // how many, up to 10,000
	More    bool      // there are more than Events
	Oldest  time.Time // the time of the first of them; zero when there is none
	Expired error     // the log's refusal: it no longer keeps the events after the position
}

// BacklogOf reads the log after e's position to say how far behind it is.
func BacklogOf(ctx context.Context, log order.EventLog, e Endpoint) (Backlog, error) {
	var b Backlog
	q := order.EventQuery{After: e.Position, Types: e.Types, Limit: 1000}
	for b.Events < 10_000 {
		page, err := log.Events(ctx, q)
		if errors.Is(err, order.ErrEventsExpired) {
			return Backlog{Expired: err}, nil
		}
		if err != nil {
			return Backlog{}, err
		}
		if len(page.Events) > 0 && b.Oldest.IsZero() {
			b.Oldest = page.Events[0].Time
		}
		b.Events += len(page.Events)
		if !page.More {
			return b, nil
		}
		q.After = page.Last
	}
	b.More = true
	return b, nil
}

// Enabled is what Enable did.
type Enabled struct {
	From, To string // the position before, and the one delivery resumes after
	// Waiting are the events of its types after To, to be sent; Skipped, with skipToNewest,
	// the events of its types the log still keeps that are not sent (those it dropped are not
	// counted).
	Waiting, Skipped Backlog
}

// Enable makes the failing or disabled endpoint id active again, its attempts and failure
// cleared (its last attempt and status kept, as history). Delivery resumes after its position,
// the event it failed on first, when the log still keeps the events after it; otherwise Enable
// refuses with order.ErrEventsExpired, unless skipToNewest, which moves the position to the
// log's newest: nothing before it is sent. The write checks again that the endpoint is not
// active (a deliverer owns an active one's state) and that its position is the one checked.
// Refusals: ErrNotFound, ErrActive, ErrMoved, order.ErrEventsExpired.
func Enable(ctx context.Context, s Store, log order.EventLog, id string, skipToNewest bool) (Enabled, error) {
	e, err := s.Get(ctx, id)
	if err != nil {
		return Enabled{}, err
	}
	if e.Status == StatusActive {
		return Enabled{}, fmt.Errorf("%w: %q", ErrActive, id)
	}
	r := Enabled{From: e.Position, To: e.Position}
	b, err := BacklogOf(ctx, log, e)
	switch {
	case err != nil:
		return Enabled{}, err
	case skipToNewest:
		if b.Expired != nil { // count what is still kept: the dropped ones are gone uncounted
			if b, err = BacklogOf(ctx, log, Endpoint{Types: e.Types}); err != nil {
				return Enabled{}, err
			}
		}
		if r.To, err = log.LastEventID(ctx); err != nil {
			return Enabled{}, err
		}
		r.Skipped = b
	case b.Expired != nil:
		oldest, err := log.Events(ctx, order.EventQuery{Limit: 1})
		if err != nil {
			return Enabled{}, err
		}
		kept := "it keeps none"
		if len(oldest.Events) > 0 {
			kept = "the oldest it keeps is " + oldest.Events[0].ID
		}
		return Enabled{}, fmt.Errorf("the log no longer keeps the events after position %s (%s): %w", e.Position, kept, b.Expired)
	default:
		r.Waiting = b
	}
	return r, update(ctx, s, id, func(e *Endpoint) error {
		switch {
		case e.Status == StatusActive:
			return fmt.Errorf("%w: %q", ErrActive, id)
		case e.Position != r.From:
			return fmt.Errorf("%w: %q", ErrMoved, id)
		}
		e.Delivery = Delivery{Status: StatusActive, Position: r.To, LastAttempt: e.LastAttempt, LastStatus: e.LastStatus}
		return nil
	})
}
