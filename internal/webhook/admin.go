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
	if err := CheckURL(rawURL); err != nil {
		return Endpoint{}, err
	}
	last, err := log.LastEventID(ctx)
	if err != nil {
		return Endpoint{}, err
	}
	e, err := NewEndpoint(rawURL, types, last, now)
	if err != nil {
		return Endpoint{}, err
	}
	return e, s.Create(ctx, e)
}

// Backlog is how far an endpoint is behind the log: the events of its types after its position.
type Backlog struct {
	Events  int       // how many, up to backlogMax
	More    bool      // there are more than Events
	Oldest  time.Time // the time of the first of them; zero when there is none
	Expired bool      // the log no longer keeps the events after the position
}

// backlogMax bounds the events BacklogOf reads.
const backlogMax = 10_000

// BacklogOf reads the log after e's position to say how far behind it is.
func BacklogOf(ctx context.Context, log order.EventLog, e Endpoint) (Backlog, error) {
	var b Backlog
	q := order.EventQuery{After: e.Position, Types: e.Types, Limit: 1000}
	for b.Events < backlogMax {
		page, err := log.Events(ctx, q)
		if errors.Is(err, order.ErrEventsExpired) {
			return Backlog{Expired: true}, nil
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

// GapError refuses to enable an endpoint whose position the log no longer reads on from:
// events after it were dropped by the retention.
type GapError struct {
	Position string // the endpoint's
	Oldest   string // the oldest event the log keeps; "" when it keeps none
	Err      error  // the log's refusal, ErrEventsExpired
}

func (e *GapError) Error() string {
	oldest := "it keeps none"
	if e.Oldest != "" {
		oldest = "the oldest it keeps is " + e.Oldest
	}
	return fmt.Sprintf("the log no longer keeps the events after position %s (%s): %v", e.Position, oldest, e.Err)
}

func (e *GapError) Unwrap() error { return e.Err }

// Enable makes the failing or disabled endpoint id active again, its attempts and failure
// cleared. Delivery resumes after its position, the event it failed on first, when the log
// still keeps the events after it; otherwise Enable refuses with a *GapError, unless
// skipToNewest, which moves the position to the log's newest: nothing before it is sent.
// Refusals: ErrNotFound, ErrActive, ErrMoved, *GapError.
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
	if err != nil {
		return Enabled{}, err
	}
	switch {
	case skipToNewest:
		if b.Expired { // count what is still kept: the dropped ones are gone uncounted
			if b, err = BacklogOf(ctx, log, Endpoint{Types: e.Types}); err != nil {
				return Enabled{}, err
			}
		}
		if r.To, err = log.LastEventID(ctx); err != nil {
			return Enabled{}, err
		}
		r.Skipped = b
	case b.Expired:
		return Enabled{}, gap(ctx, log, e.Position)
	default:
		r.Waiting = b
	}
	return r, s.Enable(ctx, id, r.From, r.To)
}

// gap is the *GapError of position, naming the oldest event the log keeps.
func gap(ctx context.Context, log order.EventLog, position string) error {
	_, err := log.Events(ctx, order.EventQuery{After: position, Limit: 1})
	switch {
	case err == nil: // the log only drops more: it said otherwise a moment ago
		err = order.ErrEventsExpired
	case !errors.Is(err, order.ErrEventsExpired):
		return err
	}
	g := &GapError{Position: position, Err: err}
	oldest, err := log.Events(ctx, order.EventQuery{Limit: 1})
	if err != nil {
		return err
	}
	if len(oldest.Events) > 0 {
		g.Oldest = oldest.Events[0].ID
	}
	return g
}
