package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
)

// schemaVersion is the file's user_version. Each step of upgrade runs, in one transaction, on a
// file of version from <= v < to, taking any older file (schema_history_test.go) to this one.
// Raise it with any change to the triggers: the last steps make them again.
const schemaVersion = 7

var upgrade = []struct {
	from, to int
	sql      string
}{
	{0, 1, `
CREATE TABLE orders (
	id        INTEGER PRIMARY KEY CHECK (id >= 0),
	pet_id    INTEGER NOT NULL CHECK (pet_id >= 0),
	quantity  INTEGER NOT NULL CHECK (quantity BETWEEN 0 AND 2147483647),
	ship_date TEXT    NOT NULL CHECK (ship_date GLOB '` + timestampGlob + `'),
	complete  INTEGER NOT NULL CHECK (complete IN (0, 1)),
	status    TEXT    NOT NULL CHECK (status IN ('pending', 'shipped', 'cancelled'))
) STRICT;
-- A DELETE records no event: it moves the orders' version here (ordersVersion).
CREATE TABLE orders_version (one INTEGER PRIMARY KEY CHECK (one = 1), value INTEGER NOT NULL) STRICT;
INSERT INTO orders_version (one, value) VALUES (1, 0);
CREATE TRIGGER orders_delete_moves_version AFTER DELETE ON orders
BEGIN UPDATE orders_version SET value = value + 1; END;
CREATE TABLE pets (
	id     INTEGER PRIMARY KEY CHECK (id >= 0),
	name   TEXT NOT NULL,
	status TEXT NOT NULL CHECK (status IN ('available', 'pending', 'sold'))
) STRICT;
CREATE TABLE api_keys (
	name       TEXT    NOT NULL PRIMARY KEY CHECK (name <> ''),
	plan       TEXT    NOT NULL CHECK (plan IN ('free', 'pro', 'business', 'enterprise')),
	per_minute INTEGER NOT NULL CHECK (per_minute >= 0),
	per_day    INTEGER NOT NULL CHECK (per_day >= 0),
	prefix     TEXT    NOT NULL,
	hash       TEXT    NOT NULL UNIQUE CHECK (length(hash) = 64 AND hash NOT GLOB '*[^0-9a-f]*'),
	created_at TEXT    NOT NULL CHECK (created_at GLOB '` + timestampGlob + `')
) STRICT;
CREATE INDEX api_keys_by_prefix ON api_keys (prefix, name);`},
	// Settings every process on the file shares: the page-token secret (stores.go, Secrets).
	{0, 2, `CREATE TABLE settings (name TEXT NOT NULL PRIMARY KEY CHECK (name <> ''), value BLOB NOT NULL) STRICT;`},
	// The log of changes (stores.go, Events). It starts empty: the orders there were not changed since.
	// The newest id Trim dropped is kept: a position below it cannot be read on from.
	{0, 3, eventsTable("order_events") + `
CREATE TABLE order_events_cut (one INTEGER PRIMARY KEY CHECK (one = 1), last_dropped INTEGER NOT NULL) STRICT;
INSERT INTO order_events_cut (one, last_dropped) VALUES (1, 0);`},
	// Webhook endpoints and where each one's delivery stands (webhooks.go). The times of the
	// delivery and of the lease are Unix nanoseconds, 0 for none: compared, not read.
	{0, 4, `
CREATE TABLE webhook_endpoints (
	id            TEXT    NOT NULL PRIMARY KEY CHECK (id <> ''),
	url           TEXT    NOT NULL,
	types         TEXT    NOT NULL, -- comma-separated; '' is every type
	secret        TEXT    NOT NULL,
	created_at    TEXT    NOT NULL CHECK (created_at GLOB '` + timestampGlob + `'),
	status        TEXT    NOT NULL CHECK (status IN ('active', 'failing', 'disabled')),
	position      TEXT    NOT NULL,
	attempts      INTEGER NOT NULL DEFAULT 0,
	first_failure INTEGER NOT NULL DEFAULT 0,
	next_attempt  INTEGER NOT NULL DEFAULT 0,
	last_attempt  INTEGER NOT NULL DEFAULT 0,
	last_status   INTEGER NOT NULL DEFAULT 0,
	last_error    TEXT    NOT NULL DEFAULT '',
	-- One instance delivers to an endpoint at a time: the one named here, until the expiry.
	lease_owner   TEXT    NOT NULL DEFAULT '',
	lease_expires INTEGER NOT NULL DEFAULT 0
) STRICT;`},
	// What older versions had: triggers that moved orders_version on every change or gave
	// other ids, and indexes for finds, which order.View answers now.
	{1, schemaVersion, `
DROP TRIGGER IF EXISTS orders_insert_moves_version;
DROP TRIGGER IF EXISTS orders_update_moves_version;
DROP TRIGGER IF EXISTS orders_insert_records_event;
DROP TRIGGER IF EXISTS orders_update_records_event;
DROP INDEX IF EXISTS orders_by_status;
DROP INDEX IF EXISTS orders_by_pet;
DROP INDEX IF EXISTS orders_by_ship_date;`},
	// Versions 3 and 4 gave ids by AUTOINCREMENT (a write to sqlite_sequence a change).
	{3, 5, eventsTable("order_events_5") + `
INSERT INTO order_events_5 SELECT * FROM order_events;
DROP TABLE order_events;
ALTER TABLE order_events_5 RENAME TO order_events;`},
	// The log is written in the statement of each change, whoever makes it; an UPDATE records
	// only where a column changed, and the status says which event it is.
	{0, schemaVersion, recordsCreated + `;
CREATE TRIGGER orders_update_records_event AFTER UPDATE ON orders
WHEN (OLD.id, OLD.pet_id, OLD.quantity, OLD.ship_date, OLD.complete, OLD.status)
	IS NOT (NEW.id, NEW.pet_id, NEW.quantity, NEW.ship_date, NEW.complete, NEW.status)
BEGIN
	INSERT INTO order_events (id, type, time, order_id, pet_id, quantity, ship_date, complete, status)
	VALUES (` + nextEventID + `,
		CASE WHEN NEW.status IS OLD.status THEN 'order.updated'
			WHEN NEW.status = 'cancelled' THEN 'order.cancelled'
			WHEN NEW.status = 'shipped' THEN 'order.shipped'
			ELSE 'order.updated' END,
		` + eventTime + `,
		NEW.id, NEW.pet_id, NEW.quantity, NEW.ship_date, NEW.complete, NEW.status);
END;`},
}

// recordsCreated makes the trigger that records each new order's order.created (bulkLoad drops it).
const recordsCreated = `CREATE TRIGGER orders_insert_records_event AFTER INSERT ON orders
BEGIN
	INSERT INTO order_events (id, type, time, order_id, pet_id, quantity, ship_date, complete, status)
	VALUES (` + nextEventID + `, 'order.created', ` + eventTime + `,
		NEW.id, NEW.pet_id, NEW.quantity, NEW.ship_date, NEW.complete, NEW.status);
END`

// eventsTable creates the log's table. No CHECK: the triggers write every row, scanEvent checks
// each it reads, and CHECKs cost an import a third more.
func eventsTable(name string) string {
	return "CREATE TABLE " + name + ` (
	id INTEGER PRIMARY KEY, type TEXT NOT NULL, time TEXT NOT NULL, order_id INTEGER NOT NULL, pet_id INTEGER NOT NULL,
	quantity INTEGER NOT NULL, ship_date TEXT NOT NULL, complete INTEGER NOT NULL, status TEXT NOT NULL
) STRICT;`
}

// migrate brings the schema up to date in a write transaction: once, should two processes race.
// A file of a newer schema is refused: this code does not know what the later steps mean.
func (db *DB) migrate(ctx context.Context) error {
	var v int
	version := func(row *sql.Row) error {
		if err := row.Scan(&v); err != nil || v <= schemaVersion {
			return db.fail(ctx, err)
		}
		return fmt.Errorf("%s: schema version %d is newer than this program's %d", db.path, v, schemaVersion)
	}
	if err := version(db.sql.QueryRowContext(ctx, "PRAGMA user_version")); err != nil || v == schemaVersion {
		return err
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		err := version(tx.QueryRowContext(ctx, "PRAGMA user_version"))
		for _, step := range upgrade {
			if err == nil && step.from <= v && v < step.to {
				_, err = tx.ExecContext(ctx, step.sql)
			}
		}
		if err == nil { // PRAGMA takes no parameters; the number is ours
			_, err = tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion))
		}
		return db.fail(ctx, err)
	})
}

// timestampLayout has one width (UTC, nine digits of nanoseconds): text order is time order.
const timestampLayout = "2006-01-02T15:04:05.000000000Z"

// eventTime is SQLite's clock in timestampLayout, to the millisecond; the events of one
// statement share its 'now'.
const eventTime = "strftime('%Y-%m-%dT%H:%M:%f000000Z', 'now')"

const timestampGlob = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]." +
	"[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]Z"

// newestEventID is the newest id the log ever gave: its newest row's, or once Trim dropped
// every row, the newest it dropped.
const newestEventID = "(SELECT max(coalesce(max(id), 0), (SELECT last_dropped FROM order_events_cut)) FROM order_events)"

// nextEventID is the newest id ever given plus one, or, when that is behind the clock, the
// clock's milliseconds since 1970 times 1,000: a file restored from a backup gives ids past
// every one its lost history gave, whose positions Events then refuses. julianday, not
// unixepoch: every SQLite an outside writer may use has it.
const nextEventID = "max(" + newestEventID + " + 1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) * 1000)"
