// Package sqlitestore keeps everything the embedded mode of the service owns in one SQLite
// file: orders, pets, API keys and the page-token secret. Any number of processes may open
// the file at once (a server, `orderd import`, `orderd keys`); each sees the others' commits
// at its next call.
//
// The file (schema version in PRAGMA user_version; schema.go migrates older files):
//
//   - orders (id INTEGER PRIMARY KEY, pet_id, quantity, ship_date, complete, status): one
//     row per order, the id as the rowid, so int64 ids round-trip exactly. ship_date is
//     RFC 3339 text in UTC with nine fractional digits (see timestampLayout), so it keeps
//     nanoseconds and sorts as time does. CHECK constraints refuse what order.Order.Validate
//     refuses; the tables are STRICT, so a column holds only its type.
//   - orders_by_status, orders_by_pet, orders_by_ship_date: indexes on one column each.
//     SQLite ends every index with the rowid, so each is in effect (column, id): a list
//     filtered on the column and paged by id (id > last ORDER BY id LIMIT n) reads it in
//     order, without a sort. A ship-date range cannot come in id order from any index, so
//     Orders.Find walks the ids for it, a bounded range a call (find.go says why).
//   - orders_version (one row): a counter that triggers on orders move in the transaction
//     of every insert, update and delete, whoever makes it. Orders.Version reads it, or
//     its cached value while no process has committed since (cache.go), so a change
//     committed by another process is seen at the very next call, with no timer.
//   - pets (id, name, status).
//   - api_keys (name PRIMARY KEY, plan, per_minute, per_day, prefix, hash UNIQUE,
//     created_at): hashes only, never a key. Keys.Lookup reads by the hash's index, or
//     answers from the keys it found while no process has committed since, so a key
//     created or revoked by another process counts at once.
//   - settings (name PRIMARY KEY, value BLOB): what every process on the file shares and
//     the first that needs it makes: the page-token secret (Secrets).
//
// Whether any process has committed is read from the wal-index header in the file's -shm,
// which SQLite rewrites at every commit (walindex.go): a request costs a query only after
// a change.
//
// Every connection runs in WAL mode with synchronous=FULL and a busy timeout; dsn in db.go
// says why. Failures of the database itself wrap store.ErrUnavailable; a row the service
// cannot use wraps store.ErrCorrupt, naming the record, and so does a damaged file. The
// faults an operator must see (a damaged file, a full disk, the file or its -shm replaced
// under the process) are also reported to whom DB.OnFault names, and those that last until a
// restart are DB.Fault's (faults.go). A file this process cannot write is refused at Open.
package sqlitestore
