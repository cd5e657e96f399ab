package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/petstore/orderd/internal/order"
)

// Events is an order.EventLog in the order_events table, which the triggers on orders write in
// the statement of each change, whoever makes it (schema.go). A position is an event's id in
// decimal; "0" is the beginning of a log that never had an event.
type Events struct{ db *DB }

// NewEvents returns the event log of db.
func NewEvents(db *DB) *Events { return &Events{db: db} }

// Events reads the bounds and the rows in one read transaction: a Trim between the two would
// otherwise drop events after an After found readable.
func (e *Events) Events(ctx context.Context, q order.EventQuery) (page order.EventPage, err error) {
	ctx, end := e.db.span(ctx, "SELECT", "order_events")
	defer func() { end(err) }()
	if q.Limit < 1 {
		return order.EventPage{}, fmt.Errorf("an event query's limit is at least 1, not %d", q.Limit)
	}
	err = e.db.readTx(ctx, func(tx *sql.Tx) (err error) {
		page, err = e.read(ctx, tx, q)
		return err
	})
	return page, err
}

// read is Events in the read transaction tx.
func (e *Events) read(ctx context.Context, tx *sql.Tx, q order.EventQuery) (order.EventPage, error) {
	after, err := strconv.ParseInt(q.After, 10, 64)
	if q.After != "" && (err != nil || strconv.FormatInt(after, 10) != q.After) { // the log's own form only
		return order.EventPage{}, fmt.Errorf("%w: %q is not a position of this log", order.ErrEventsExpired, q.After)
	}
	var dropped, newest int64
	var known bool // Ids have gaps (nextEventID): a position between the bounds may be of a history this file
	// does not have (restored from a backup), whose events a client would miss unwarned.
	// The newest and the newest dropped are positions whether or not their row is kept.
	err = tx.QueryRowContext(ctx, "SELECT last_dropped, "+newestEventID+", EXISTS (SELECT 1 FROM order_events WHERE id = ?) FROM order_events_cut",
		after).Scan(&dropped, &newest, &known)
	if errors.Is(err, sql.ErrNoRows) {
		err = corrupt("the row of order_events_cut is missing")
	}
	if err != nil {
		return order.EventPage{}, e.db.fail(ctx, err)
	}
	page := order.EventPage{Last: q.After}
	switch {
	case q.After == "":
		after, page.Last = dropped, strconv.FormatInt(newest, 10)
	case after < dropped:
		return order.EventPage{}, fmt.Errorf("%w: events after %d were dropped, up to %d", order.ErrEventsExpired, after, dropped)
	case after > newest:
		return order.EventPage{}, fmt.Errorf("%w: %d is past the newest event, %d", order.ErrEventsExpired, after, newest)
	case after > dropped && after < newest && !known:
		return order.EventPage{}, fmt.Errorf("%w: %d is no event of this log", order.ErrEventsExpired, after)
	}
	rows, err := tx.QueryContext(ctx, "SELECT id, type, time, order_id, pet_id, quantity, ship_date, complete, status FROM order_events WHERE id > ? ORDER BY id LIMIT ?", after, q.Limit)
	if err != nil {
		return order.EventPage{}, e.db.fail(ctx, err)
	}
	defer rows.Close()
	examined := 0
	for ; rows.Next(); examined++ {
		ev, err := scanEvent(rows)
		if err != nil {
			return order.EventPage{}, e.db.fail(ctx, err)
		}
		if page.Last = ev.ID; len(q.Types) == 0 || slices.Contains(q.Types, ev.Type) {
			page.Events = append(page.Events, ev)
		}
	}
	page.More = examined == q.Limit
	return page, e.db.fail(ctx, rows.Err())
}

// scanEvent reads an event's id, type and time, then the order's columns; one the service
// cannot use is ErrCorrupt, named.
func scanEvent(row scanner) (ev order.Event, err error) {
	var id int64
	var typ, at string
	if ev.Order, err = scanOrder(row, &id, &typ, &at); errors.Is(err, order.ErrCorrupt) {
		return order.Event{}, fmt.Errorf("event %d: %w", id, err)
	} else if err != nil {
		return order.Event{}, err
	}
	ev.ID, ev.Type = strconv.FormatInt(id, 10), order.EventType(typ)
	if !slices.Contains(order.EventTypes, ev.Type) {
		return order.Event{}, corrupt("event %d: type %q is none of the log's", id, typ)
	}
	if ev.Time, err = parseTime(at); err != nil {
		return order.Event{}, corrupt("event %d: time %q: %w", id, at, err)
	}
	return ev, nil
}

// LastEventID returns the newest id ever given, "0" before any.
func (e *Events) LastEventID(ctx context.Context) (string, error) {
	var id int64
	err := e.db.sql.QueryRowContext(ctx, "SELECT "+newestEventID).Scan(&id)
	return strconv.FormatInt(id, 10), e.db.fail(ctx, err)
}

// Trim drops the oldest events, always a prefix of the log, and records the newest id dropped in
// the same write transaction: every position below it is refused from then on, and every
// other is read on from without a gap. By age, the log is cut before its first event within
// MaxAge: an older event after that one (a writer whose clock is behind) stays until it goes.
func (e *Events) Trim(ctx context.Context, r order.Retention) (int64, error) {
	var upTo int64 // the newest id to drop; 0: none
	if r.MaxCount > 0 {
		// Walked before the write begins, holding no writer off: the log only grows at its
		// end meanwhile, so the cut found still leaves at least MaxCount events.
		err := e.db.sql.QueryRowContext(ctx, "SELECT id FROM order_events ORDER BY id DESC LIMIT 1 OFFSET ?", r.MaxCount).Scan(&upTo)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, e.db.fail(ctx, err)
		}
	}
	if r.MaxAge <= 0 && upTo == 0 {
		return 0, nil
	}
	var n int64
	err := e.db.write(ctx, func(tx *sql.Tx) error {
		if r.MaxAge > 0 {
			const byAge = "SELECT max(?1, coalesce(max(id), 0)) FROM order_events WHERE id < " +
				"coalesce((SELECT id FROM order_events WHERE time >= ?2 ORDER BY id LIMIT 1), 9223372036854775807)"
			cutoff := time.Now().Add(-r.MaxAge).UTC().Format(timestampLayout) // text order is time order
			if err := tx.QueryRowContext(ctx, byAge, upTo, cutoff).Scan(&upTo); err != nil {
				return e.db.fail(ctx, err)
			}
		}
		if upTo == 0 {
			return errNoWrite
		}
		res, err := tx.ExecContext(ctx, "DELETE FROM order_events WHERE id <= ?", upTo)
		if err == nil {
			n, _ = res.RowsAffected() // never fails in modernc.org/sqlite
			_, err = tx.ExecContext(ctx, "UPDATE order_events_cut SET last_dropped = max(last_dropped, ?)", upTo)
		}
		return e.db.fail(ctx, err)
	})
	return n, err
}

// WaitForEvents waits until the newest id is not after: an event follows it, or it is not a
// position this log reached, which Events refuses. It looks every 10 ms, and queries when the
// wal-index header moved or is not mapped. A failed query returns nil: the read after reports it.
func (e *Events) WaitForEvents(ctx context.Context, after string) error {
	var seen walHeader
	for first := true; ; first = false {
		h, ok := e.db.cache.wal.header() // before the query: a commit after it moves it
		if first || !ok || h != seen {
			// A point read: its context is not watched (cachedRead says why).
			if newest, err := e.LastEventID(context.WithoutCancel(ctx)); err != nil || newest != after {
				return nil
			}
			seen = h
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}
