-- The orders' version is orders_version's value plus the newest event id (a DELETE moves the
-- first), and the log gives its ids itself: versions 3 and 4 gave them by AUTOINCREMENT.
DROP TRIGGER IF EXISTS orders_insert_moves_version;
DROP TRIGGER IF EXISTS orders_update_moves_version;
DROP TRIGGER IF EXISTS orders_insert_records_event;
DROP TRIGGER IF EXISTS orders_update_records_event;
CREATE TABLE order_events_5 (
	id INTEGER PRIMARY KEY, type TEXT NOT NULL, time TEXT NOT NULL, order_id INTEGER NOT NULL, pet_id INTEGER NOT NULL,
	quantity INTEGER NOT NULL, ship_date TEXT NOT NULL, complete INTEGER NOT NULL, status TEXT NOT NULL
) STRICT;
INSERT INTO order_events_5 SELECT * FROM order_events;
DROP TABLE order_events;
ALTER TABLE order_events_5 RENAME TO order_events;
