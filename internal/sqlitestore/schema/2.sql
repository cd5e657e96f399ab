-- Settings every process on the file shares: the page-token secret (stores.go, Secrets).
CREATE TABLE settings (name TEXT NOT NULL PRIMARY KEY CHECK (name <> ''), value BLOB NOT NULL) STRICT;
