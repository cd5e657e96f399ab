package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
)

// bulkLoad begins an import into an empty orders table: it drops the trigger that records
// each new row's order.created, and returns what records them all at once, after the rows,
// and makes the trigger again, in the same transaction (others see neither). Into a table
// that has rows, it returns nil: the triggers record each change.
func bulkLoad(ctx context.Context, tx *sql.Tx) (recordAdded func() error, err error) {
	var create string
	const q = "SELECT sql FROM sqlite_schema WHERE name = 'orders_insert_records_event' AND NOT EXISTS (SELECT 1 FROM orders)"
	if err := tx.QueryRowContext(ctx, q).Scan(&create); errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, "DROP TRIGGER orders_insert_records_event"); err != nil {
		return nil, err
	}
	// The first event's id is given, as the trigger gives it (nextEventID): a log that Trim
	// emptied would start its row ids at 1 again. Each next one is SQLite's, the newest row's
	// plus one: numbering the rows in the statement (row_number) cost an import of a million
	// orders 2 to 4 s more. The rest take the first one's time, so that the import's events
	// have one time, as one statement's do.
	const columns = "type, time, order_id, pet_id, quantity, ship_date, complete, status"
	return func() error {
		for _, q := range []string{
			"INSERT INTO order_events (id, " + columns + ") SELECT " + nextEventID + ", 'order.created', " + eventTime + ", " +
				orderColumns + " FROM orders ORDER BY id LIMIT 1",
			"INSERT INTO order_events (" + columns + ") SELECT 'order.created', (SELECT time FROM order_events ORDER BY id DESC LIMIT 1), " +
				orderColumns + " FROM orders WHERE id > (SELECT min(id) FROM orders) ORDER BY id",
			create,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	}, nil
}
