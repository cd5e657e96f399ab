-- The log of changes (stores.go, Events). It starts empty: the orders there were not changed since.
-- No CHECK: the triggers write every row, scanEvent checks each it reads, and CHECKs cost an import a third more.
-- The newest id Trim dropped is kept: a position below it cannot be read on from.
CREATE TABLE order_events (
	id INTEGER PRIMARY KEY, type TEXT NOT NULL, time TEXT NOT NULL, order_id INTEGER NOT NULL, pet_id INTEGER NOT NULL,
	quantity INTEGER NOT NULL, ship_date TEXT NOT NULL, complete INTEGER NOT NULL, status TEXT NOT NULL
) STRICT;
CREATE TABLE order_events_cut (one INTEGER PRIMARY KEY CHECK (one = 1), last_dropped INTEGER NOT NULL) STRICT;
INSERT INTO order_events_cut (one, last_dropped) VALUES (1, 0);
