package webhook

import (
	"context"
	"errors"
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
