-- Orders, pets and API keys.
CREATE TABLE orders (
	id        INTEGER PRIMARY KEY CHECK (id >= 0),
	pet_id    INTEGER NOT NULL CHECK (pet_id >= 0),
	quantity  INTEGER NOT NULL CHECK (quantity BETWEEN 0 AND 2147483647),
	ship_date TEXT    NOT NULL CHECK (ship_date GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]Z'),
	complete  INTEGER NOT NULL CHECK (complete IN (0, 1)),
	status    TEXT    NOT NULL CHECK (status IN ('pending', 'shipped', 'cancelled'))
) STRICT;
-- A DELETE records no event: it moves the orders' version here (Orders.Version).
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
	created_at TEXT    NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]Z')
) STRICT;
CREATE INDEX api_keys_by_prefix ON api_keys (prefix, name);
