package sqlitestore

// The schemas older versions of orderd made, step by step, as they ran them: openSchema makes
// a file of any of them, which Open must bring up to date. Copied from schema.go as each
// version left it; never edit.

// timestampGlob is what the CHECKs of every version's timestamps match (timestampLayout).
const timestampGlob = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]." +
	"[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]Z"

// oldMigrations[i] took a file from user_version i to i+1.
var oldMigrations = []string{
	// 0 → 1: orders, pets and API keys.
	`
CREATE TABLE orders (
	id        INTEGER PRIMARY KEY CHECK (id >= 0),
	pet_id    INTEGER NOT NULL CHECK (pet_id >= 0),
	quantity  INTEGER NOT NULL CHECK (quantity BETWEEN 0 AND 2147483647),
	ship_date TEXT    NOT NULL CHECK (ship_date GLOB '` + timestampGlob + `'),
	complete  INTEGER NOT NULL CHECK (complete IN (0, 1)),
	status    TEXT    NOT NULL CHECK (status IN ('pending', 'shipped', 'cancelled'))
) STRICT;

-- Each index ends with the rowid (the id), so a filter on its column answers in id order.
CREATE INDEX orders_by_status    ON orders (status);
CREATE INDEX orders_by_pet       ON orders (pet_id);
CREATE INDEX orders_by_ship_date ON orders (ship_date);

CREATE TABLE orders_version (
	one   INTEGER PRIMARY KEY CHECK (one = 1),
	value INTEGER NOT NULL
) STRICT;
INSERT INTO orders_version (one, value) VALUES (1, 0);

-- Every change to the orders moves the version in its own transaction, whoever writes.
CREATE TRIGGER orders_insert_moves_version AFTER INSERT ON orders
BEGIN UPDATE orders_version SET value = value + 1; END;
CREATE TRIGGER orders_update_moves_version AFTER UPDATE ON orders
BEGIN UPDATE orders_version SET value = value + 1; END;
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
CREATE INDEX api_keys_by_prefix ON api_keys (prefix, name);
`,
	// 1 → 2: settings every process on the file shares: the page-token secret (secrets.go).
	`
CREATE TABLE settings (
	name  TEXT NOT NULL PRIMARY KEY CHECK (name <> ''),
	value BLOB NOT NULL
) STRICT;
`,
	// 2 → 3: the log of changes to the orders (events.go), written by triggers so that every
	// writer, plain SQL included, records its changes in the statement that makes them. The
	// log starts empty: the orders already in the file were not changed since it exists.
	`
-- AUTOINCREMENT: no id is given twice, not even once Trim has deleted every row. No CHECK:
-- the triggers write every row, scanEvent checks each it reads, and any CHECK here cost a
-- change about 4 µs more a row (a third of the events' cost to an import that updates).
CREATE TABLE order_events (
	id        INTEGER PRIMARY KEY AUTOINCREMENT,
	type      TEXT    NOT NULL,
	time      TEXT    NOT NULL,
	order_id  INTEGER NOT NULL,
	pet_id    INTEGER NOT NULL,
	quantity  INTEGER NOT NULL,
	ship_date TEXT    NOT NULL,
	complete  INTEGER NOT NULL,
	status    TEXT    NOT NULL
) STRICT;

-- The newest id Trim dropped: a position below it is one the log can no longer read on from.
CREATE TABLE order_events_cut (
	one          INTEGER PRIMARY KEY CHECK (one = 1),
	last_dropped INTEGER NOT NULL
) STRICT;
INSERT INTO order_events_cut (one, last_dropped) VALUES (1, 0);

CREATE TRIGGER orders_insert_records_event AFTER INSERT ON orders
BEGIN
	INSERT INTO order_events (type, time, order_id, pet_id, quantity, ship_date, complete, status)
	VALUES ('order.created', ` + eventTime + `,
		NEW.id, NEW.pet_id, NEW.quantity, NEW.ship_date, NEW.complete, NEW.status);
END;
-- An UPDATE records only where a column changed; the status says which event it is.
CREATE TRIGGER orders_update_records_event AFTER UPDATE ON orders
WHEN (OLD.id, OLD.pet_id, OLD.quantity, OLD.ship_date, OLD.complete, OLD.status)
	IS NOT (NEW.id, NEW.pet_id, NEW.quantity, NEW.ship_date, NEW.complete, NEW.status)
BEGIN
	INSERT INTO order_events (type, time, order_id, pet_id, quantity, ship_date, complete, status)
	VALUES (CASE WHEN NEW.status IS OLD.status THEN 'order.updated'
			WHEN NEW.status = 'cancelled' THEN 'order.cancelled'
			WHEN NEW.status = 'shipped' THEN 'order.shipped'
			ELSE 'order.updated' END,
		` + eventTime + `,
		NEW.id, NEW.pet_id, NEW.quantity, NEW.ship_date, NEW.complete, NEW.status);
END;
`,
	// 3 → 4: webhook endpoints and where each one's delivery stands (webhooks.go). The times
	// of the delivery and of the lease are Unix nanoseconds, 0 for none: compared, not read.
	`
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
) STRICT;
`,
	// 4 → 5: a cancel's commit writes two pages fewer, the commit being most of what a cancel
	// costs. The orders' version is orders_version's value plus the newest event id, so a
	// change that records an event moves it through the event alone; a DELETE records no event
	// and still moves orders_version, an UPDATE that changes nothing moves neither. And the log
	// gives its ids itself (newestEventID), without AUTOINCREMENT's write to sqlite_sequence.
	`
DROP TRIGGER orders_insert_moves_version;
DROP TRIGGER orders_update_moves_version;
DROP TRIGGER orders_insert_records_event;
DROP TRIGGER orders_update_records_event;

CREATE TABLE order_events_5 (
	id        INTEGER PRIMARY KEY,
	type      TEXT    NOT NULL,
	time      TEXT    NOT NULL,
	order_id  INTEGER NOT NULL,
	pet_id    INTEGER NOT NULL,
	quantity  INTEGER NOT NULL,
	ship_date TEXT    NOT NULL,
	complete  INTEGER NOT NULL,
	status    TEXT    NOT NULL
) STRICT;
INSERT INTO order_events_5 SELECT * FROM order_events;
DROP TABLE order_events;
ALTER TABLE order_events_5 RENAME TO order_events;
` + oldRecordsEvents(newestEventID+" + 1"),
	// 5 → 6: an event's id comes from the clock when that is ahead of the newest id plus one
	// (nextEventID), so that a file restored from a backup does not give again the ids of the
	// history it lost: a reader's position from that history then stays unknown, and expired.
	`
DROP TRIGGER orders_insert_records_event;
DROP TRIGGER orders_update_records_event;
` + oldRecordsEvents(nextEventID),
	// 6 → 7: orders are read from memory (order.View), by id only: no query reads these
	// indexes any more, and every write to orders paid for them.
	`
DROP INDEX orders_by_status;
DROP INDEX orders_by_pet;
DROP INDEX orders_by_ship_date;
`,
}

// oldRecordsEvents is the triggers that record the orders' changes in the log, each event with
// the id nextID gives (an expression of the statement). Schema versions 5 and 6 have it: never
// edit.
func oldRecordsEvents(nextID string) string {
	return `
CREATE TRIGGER orders_insert_records_event AFTER INSERT ON orders
BEGIN
	INSERT INTO order_events (id, type, time, order_id, pet_id, quantity, ship_date, complete, status)
	VALUES (` + nextID + `, 'order.created', ` + eventTime + `,
		NEW.id, NEW.pet_id, NEW.quantity, NEW.ship_date, NEW.complete, NEW.status);
END;
CREATE TRIGGER orders_update_records_event AFTER UPDATE ON orders
WHEN (OLD.id, OLD.pet_id, OLD.quantity, OLD.ship_date, OLD.complete, OLD.status)
	IS NOT (NEW.id, NEW.pet_id, NEW.quantity, NEW.ship_date, NEW.complete, NEW.status)
BEGIN
	INSERT INTO order_events (id, type, time, order_id, pet_id, quantity, ship_date, complete, status)
	VALUES (` + nextID + `,
		CASE WHEN NEW.status IS OLD.status THEN 'order.updated'
			WHEN NEW.status = 'cancelled' THEN 'order.cancelled'
			WHEN NEW.status = 'shipped' THEN 'order.shipped'
			ELSE 'order.updated' END,
		` + eventTime + `,
		NEW.id, NEW.pet_id, NEW.quantity, NEW.ship_date, NEW.complete, NEW.status);
END;
`
}
