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

// Trim drops the oldest events, always a prefix of the log, and records the newest id dropped in
// the same write transaction: every position below it is refused from then on, and every
// other is read on from without a gap.
func (e *Events) Trim(ctx context.Context, r order.Retention) (int64, error) {
	if r.MaxAge <= 0 && r.MaxCount <= 0 {
		return 0, nil
	}
	var upTo int64 // the newest id to drop; 0: none
	if r.MaxCount > 0 {
		// Walked before the write begins (a walk of a million events takes about 80 ms, which
		// would hold every writer off): the log only grows at its end meanwhile, so the cut
		// found still leaves at least MaxCount events. Ids have gaps (nextEventID): their span
		// says nothing of the count.
		err := e.db.sql.QueryRowContext(ctx, trimByCount, r.MaxCount).Scan(&upTo)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, e.db.fail(ctx, err)
		}
	}
	tx, done, err := e.db.beginWrite(ctx)
	if err != nil {
		return 0, err
	}
	defer done()
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
