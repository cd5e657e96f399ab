package sqlitestore

import (
	"context"
	"database/sql"
)

// bulkLoad is an import into an empty table, which drops the table's indexes and triggers
// and makes them again once the rows are in, in the same transaction: an index built from
// all the rows at once costs a fraction of a million inserts into it, and the triggers'
// work (the version moved once a row, an event recorded a row) is done in a statement each.
// Other processes see the rows and the schema, the same as before, only once the import
// commits.
type bulkLoad struct {
	creates []string // the SQL of each index and trigger, as the schema has it
}

// intoEmpty starts a bulkLoad if table has no rows, or returns nil.
func intoEmpty(ctx context.Context, tx *sql.Tx, table string) (*bulkLoad, error) {
	var empty bool
	if err := tx.QueryRowContext(ctx, "SELECT NOT EXISTS (SELECT 1 FROM "+table+")").Scan(&empty); err != nil || !empty {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx,
		"SELECT type, name, sql FROM sqlite_schema WHERE type IN ('index', 'trigger') AND tbl_name = ? AND sql IS NOT NULL", table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var drops []string
	b := &bulkLoad{}
	for rows.Next() {
		var kind, name, create string
		if err := rows.Scan(&kind, &name, &create); err != nil {
			return nil, err
		}
		drops = append(drops, "DROP "+kind+` "`+name+`"`) // kind is index or trigger
		b.creates = append(b.creates, create)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, drop := range drops {
		if _, err := tx.ExecContext(ctx, drop); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// finish does what the insert trigger would have for the added rows, which are every row (the
// table was empty): records an order.created for each, which moves the orders' version too;
// then it makes the indexes and triggers again.
func (b *bulkLoad) finish(ctx context.Context, tx *sql.Tx) error {
	// The first event's id is given, as the triggers give it (nextEventID): a log that Trim
	// emptied would start its row ids at 1 again. Each next one is SQLite's, the newest row's
	// plus one: numbering the rows in the statement (row_number) cost an import of a million
	// orders 2 to 4 s more. The rest take the first one's time, so that the import's events
	// have one time, as one statement's do.
	const columns = "type, time, order_id, pet_id, quantity, ship_date, complete, status"
	for _, q := range []string{
		"INSERT INTO order_events (id, " + columns + ") SELECT " + nextEventID + ", 'order.created', " + eventTime + ", " +
			orderColumns + " FROM orders ORDER BY id LIMIT 1",
		"INSERT INTO order_events (" + columns + ") SELECT 'order.created', (SELECT time FROM order_events ORDER BY id DESC LIMIT 1), " +
			orderColumns + " FROM orders WHERE id > (SELECT min(id) FROM orders) ORDER BY id",
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	for _, create := range b.creates {
		if _, err := tx.ExecContext(ctx, create); err != nil {
			return err
		}
	}
	return nil
}
