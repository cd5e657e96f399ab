package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/petstore/orderd/internal/order"
)

// The newest event each bound drops. By age, the log is cut before its first event within
// MaxAge: an older event after that one (a writer whose clock is behind) stays until it goes.
const (
	trimByCount = "SELECT id FROM order_events ORDER BY id DESC LIMIT 1 OFFSET ?"
	trimByAge   = "SELECT coalesce(max(id), 0) FROM order_events WHERE id < " +
		"coalesce((SELECT id FROM order_events WHERE time >= ? ORDER BY id LIMIT 1), 9223372036854775807)"
)

// idSpan bounds the log's count by its ids' span. Each of max and min alone reads one end of
// the table; together in one query they scan it.
const idSpan = "SELECT coalesce((SELECT max(id) FROM order_events) - (SELECT min(id) FROM order_events) + 1, 0)"

// Trim drops the oldest events, always a prefix of the log, and records the newest id dropped in
// the same write transaction: every position below it is refused from then on, and every
// other is read on from without a gap.
func (e *Events) Trim(ctx context.Context, r order.Retention) (int64, error) {
	if r.MaxAge <= 0 && r.MaxCount <= 0 {
		return 0, nil
	}
	tx, done, err := e.db.beginWrite(ctx)
	if err != nil {
		return 0, err
	}
	defer done()
	var upTo int64 // the newest id to drop; 0: none
	if r.MaxCount > 0 {
		// The span of the ids bounds their count: only a log that may hold more than MaxCount
		// is walked for the one to cut at (a walk of a million events held the write 80 ms).
		var span int64
		err := tx.QueryRowContext(ctx, idSpan).Scan(&span)
		if err == nil && span > r.MaxCount {
			err = tx.QueryRowContext(ctx, trimByCount, r.MaxCount).Scan(&upTo)
		}
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, e.db.fail(ctx, err)
		}
	}
	if r.MaxAge > 0 {
		var byAge int64
		cutoff := time.Now().Add(-r.MaxAge).UTC().Format(timestampLayout) // text order is time order
		if err := tx.QueryRowContext(ctx, trimByAge, cutoff).Scan(&byAge); err != nil {
			return 0, e.db.fail(ctx, err)
		}
		upTo = max(upTo, byAge)
	}
	if upTo == 0 {
		return 0, nil // no commit: nothing for the wal-index header to tell
	}
	res, err := tx.ExecContext(ctx, "DELETE FROM order_events WHERE id <= ?", upTo)
	if err == nil {
		_, err = tx.ExecContext(ctx, "UPDATE order_events_cut SET last_dropped = max(last_dropped, ?)", upTo)
	}
	if err == nil {
		err = e.db.commit(tx)
	}
	if err != nil {
		return 0, e.db.fail(ctx, err)
	}
	n, _ := res.RowsAffected() // never fails in modernc.org/sqlite
	return n, nil
}
