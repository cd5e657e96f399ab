// Package sqlitestore keeps everything the embedded mode of the service owns in one SQLite
// file: orders, pets, API keys and the page-token secret (schema.go). Any number of
// processes may open the file at once (a server, `orderd import`, `orderd keys`); each sees
// the others' commits at its next call, without a timer: the orders' version is a row that
// triggers move, and reads are answered from memory only while the wal-index header says no
// process has committed since (cache.go, walindex.go).
//
// Failures of the database wrap store.ErrUnavailable; a row the service cannot use, or a
// damaged file, wraps store.ErrCorrupt. The faults an operator must see are reported to
// DB.OnFault (faults.go). A file this process cannot write is refused at Open.
package sqlitestore
