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

var _ order.EventLog = (*Events)(nil)

// Events is an order.EventLog in the order_events table, which the triggers on orders write in
// the statement of each change, whoever makes it (schema.go). A position is an event's id in
// decimal; "0" is the beginning of a log that never had an event.
type Events struct{ db *DB }

// NewEvents returns the event log of db.
func NewEvents(db *DB) *Events { return &Events{db: db} }

const (
	newestEvent = "SELECT " + newestEventID
	eventBounds = "SELECT last_dropped, " + newestEventID + " FROM order_events_cut"
	readEvents  = "SELECT " + eventColumns + " FROM order_events WHERE id > ? ORDER BY id LIMIT ?"
	isEvent     = "SELECT EXISTS (SELECT 1 FROM order_events WHERE id = ?)"
)

// Events reads the bounds and the rows in one read transaction: a Trim between the two would
// otherwise drop events after an After found readable.
func (e *Events) Events(ctx context.Context, q order.EventQuery) (_ order.EventPage, err error) {
	ctx, end := e.db.span(ctx, "SELECT", "order_events")
	defer func() { end(err) }()
	if q.Limit < 1 {
		return order.EventPage{}, fmt.Errorf("an event query's limit is at least 1, not %d", q.Limit)
	}
	tx, err := e.db.sql.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return order.EventPage{}, e.db.fail(ctx, err)
	}
	defer tx.Rollback()
	return e.read(ctx, tx, q)
}

// read is Events in the read transaction tx.
func (e *Events) read(ctx context.Context, tx *sql.Tx, q order.EventQuery) (order.EventPage, error) {
	after, ok := position(q.After)
	if !ok && q.After != "" {
		return order.EventPage{}, fmt.Errorf("%w: %q is not a position of this log", order.ErrEventsExpired, q.After)
	}
	var dropped, newest int64
	err := tx.StmtContext(ctx, e.db.stmts.eventBounds).QueryRowContext(ctx).Scan(&dropped, &newest)
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
	case after > dropped && after < newest:
		// Ids have gaps (nextEventID), so a position between the bounds may be of a history
		// this file does not have (it was restored from a backup): read on from it, a client
		// would miss that history's events unwarned. The newest and the newest dropped are
		// positions whether or not their row is kept.
		var known bool
		if err := tx.StmtContext(ctx, e.db.stmts.isEvent).QueryRowContext(ctx, after).Scan(&known); err != nil {
			return order.EventPage{}, e.db.fail(ctx, err)
		}
		if !known {
			return order.EventPage{}, fmt.Errorf("%w: %d is no event of this log", order.ErrEventsExpired, after)
		}
	}
	rows, err := tx.StmtContext(ctx, e.db.stmts.readEvents).QueryContext(ctx, after, q.Limit)
	if err != nil {
		return order.EventPage{}, e.db.fail(ctx, err)
	}
	defer rows.Close()
	examined := 0
	for rows.Next() {
		ev, err := scanEvent(rows)
		if err != nil {
			return order.EventPage{}, e.db.fail(ctx, err)
		}
		examined++
		page.Last = ev.ID
		if len(q.Types) == 0 || slices.Contains(q.Types, ev.Type) {
			page.Events = append(page.Events, ev)
		}
	}
	if err := rows.Err(); err != nil {
		return order.EventPage{}, e.db.fail(ctx, err)
	}
	page.More = examined == q.Limit
	return page, nil
}

// LastEventID returns the newest id ever given, "0" before any.
func (e *Events) LastEventID(ctx context.Context) (string, error) {
	id, err := e.newest(ctx)
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(id, 10), nil
}

func (e *Events) newest(ctx context.Context) (int64, error) {
	var id int64
	err := e.db.stmts.newestEvent.QueryRowContext(ctx).Scan(&id)
	return id, e.db.fail(ctx, err)
}

// position reads a position as this log writes them: an int64 in decimal, as FormatInt has it.
func position(s string) (int64, bool) {
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && strconv.FormatInt(id, 10) == s
}

// eventRow scans an event's id, type and time ahead of the columns scanOrder reads.
type eventRow struct {
	row  scanner
	head []any
}

func (r eventRow) Scan(dest ...any) error { return r.row.Scan(append(r.head, dest...)...) }

// scanEvent reads the eventColumns of a row; one the service cannot use is ErrCorrupt, named.
func scanEvent(row scanner) (order.Event, error) {
	var (
		id       int64
		typ, at  string
		ev       order.Event
		parseErr error
	)
	o, err := scanOrder(eventRow{row, []any{&id, &typ, &at}})
	if errors.Is(err, order.ErrCorrupt) {
		return order.Event{}, fmt.Errorf("event %d: %w", id, err)
	}
	if err != nil {
		return order.Event{}, err
	}
	ev.ID, ev.Type, ev.Order = strconv.FormatInt(id, 10), order.EventType(typ), o
	if !slices.Contains(order.EventTypes, ev.Type) {
		return order.Event{}, corrupt("event %d: type %q is none of the log's", id, typ)
	}
	if ev.Time, parseErr = time.Parse(timestampLayout, at); parseErr != nil {
		return order.Event{}, corrupt("event %d: time %q: %w", id, at, parseErr)
	}
	return ev, nil
}
