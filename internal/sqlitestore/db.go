// Package sqlitestore keeps what the embedded mode owns (orders, pets, API keys, the page-token secret, webhooks) in
// one SQLite file that any number of processes may open at once; each sees the others' commits at its next call
// (docs/design.md, "Consistency"). Failures wrap order.ErrUnavailable; a damaged file or an unusable row, ErrCorrupt.
package sqlitestore

import (
	"cmp"
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petstore/orderd/internal/order"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"modernc.org/sqlite" // the database/sql driver "sqlite", in pure Go: the binary stays static
	sqlite3 "modernc.org/sqlite/lib"
)

// DB is one open SQLite file, safe for concurrent use; its stores share its connections.
type DB struct {
	path    string
	sql     *sql.DB
	writes  chan struct{} // this process's writers, one at a time, in turn; SQLite's busy handler is for other processes
	pin     *sql.Conn     // held unused: its SHARED lock keeps the -shm from being deleted
	cache   readCache
	tracer  trace.Tracer // nil: no spans (Trace)
	report  atomic.Pointer[func(*order.Fault)]
	lasting atomic.Pointer[order.Fault] // the first fault that lasts until a restart
	full    atomic.Pointer[order.Fault] // until a write commits again
	unwatch func()                      // stops watchFiles
	closing sync.Once
}

// The kinds of order.Fault this package reports (docs/operations.md, "When the SQLite file is damaged or replaced", has their table).
const (
	FaultCorrupt    = "corrupt"     // the file is damaged or not a database; it lasts
	FaultFull       = "full"        // no room for a write, until a write commits again
	FaultReplaced   = "replaced"    // the path no longer names the file opened; it lasts
	FaultShmRemoved = "shm_removed" // the file's -shm was deleted or replaced; it lasts
)

// Open opens the SQLite file at path, creating or migrating its schema, and refuses one this process
// cannot write. Writes wait up to busyTimeout (0: 5 s) for another process's write. Every connection runs
// journal_mode=WAL (readers and the writer never wait for each other), synchronous=FULL (a commit, a cancel
// answered 204, survives a crash of the machine) and _txlock=immediate (a write takes the write lock at
// BEGIN, never failing later on an outdated snapshot; a ReadOnly transaction begins deferred).
func Open(path string, busyTimeout time.Duration) (*DB, error) {
	if busyTimeout <= 0 {
		busyTimeout = 5 * time.Second
	}
	ctx := context.Background()
	db := &DB{path: path, writes: make(chan struct{}, 1)}
	// A missing file is created private to its owner (the -wal and -shm get its mode); SQLite reports the rest.
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	}
	escape := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	dsn := fmt.Sprintf("file:%s?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate",
		escape.Replace(filepath.Clean(path)), busyTimeout.Milliseconds())
	db.sql, _ = sql.Open("sqlite", dsn)          // it fails only for a driver not registered
	conns := max(4, 2*runtime.GOMAXPROCS(0)) + 1 // kept open (each runs the pragmas, reads the schema); +1: the pin
	db.sql.SetMaxOpenConns(conns)
	db.sql.SetMaxIdleConns(conns)
	err := db.migrate(ctx)
	if err == nil {
		err = db.fail(ctx, db.watch(ctx))
	}
	if err != nil {
		if db.pin != nil {
			db.pin.Close() // db.sql.Close does not close a connection in use
		}
		db.sql.Close()
		return nil, err
	}
	return db, nil
}

// watch pins a connection that has read the file, refuses the file if SQLite opened it
// read-only (it says nothing, and every process writes), maps the wal-index and watches the paths.
func (db *DB) watch(ctx context.Context) (err error) {
	if db.pin, err = db.sql.Conn(ctx); err != nil {
		return err
	}
	var mode string
	var version int64 // NULL without its row: Scan fails, and so does Open
	const q = "SELECT journal_mode, (SELECT value FROM orders_version) FROM pragma_journal_mode"
	if err := db.pin.QueryRowContext(ctx, q).Scan(&mode, &version); err != nil {
		return err
	}
	err = db.pin.Raw(func(c any) error { // c is modernc.org/sqlite's conn
		readOnly, err := c.(interface{ IsReadOnly(string) (bool, error) }).IsReadOnly("main")
		if err == nil && readOnly {
			err = fmt.Errorf("SQLite file %s: opened read-only, but orderd writes to it (cancels, keys, the page-token secret): "+
				"make the file, its directory and its -wal and -shm files writable by this process", db.path)
		}
		return err
	})
	if err != nil {
		return err
	}
	file, err := os.Stat(db.path)
	if err != nil {
		return err
	}
	var shm os.FileInfo
	if mode != "wal" {
		db.cache.off = fmt.Errorf("the file's journal mode is %q, not WAL", mode)
	} else if shm, err = os.Stat(db.path + "-shm"); err != nil {
		return err
	} else {
		db.cache.wal, db.cache.off = openWalIndex(db.path+"-shm", shm)
	}
	db.watchFiles(file, shm)
	return nil
}

// Close closes the file; again, it does nothing. Calls made after it fail with order.ErrUnavailable.
func (db *DB) Close() (err error) {
	db.closing.Do(func() {
		db.unwatch()
		db.pin.Close()
		err = db.sql.Close()
		db.cache.forget()
		err = errors.Join(err, db.cache.wal.release()) // the wal-index's descriptor must outlive the connections
	})
	return err
}

// write runs fn in a write transaction, after this process's earlier ones, and commits it. fn sorts its own errors
// (fail); errNoWrite rolls back one that wrote nothing: a full disk's fault ends only at a commit that wrote (room).
func (db *DB) write(ctx context.Context, fn func(*sql.Tx) error) error {
	// Lasting faults forbid writes (docs/design.md, Errors), but corruption: SQLite refuses writes to damaged pages.
	if f := db.lasting.Load(); f != nil && f.Kind != FaultCorrupt {
		return f
	}
	select {
	case db.writes <- struct{}{}:
		defer func() { <-db.writes }()
	case <-ctx.Done():
		return ctx.Err()
	}
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return db.fail(ctx, err)
	}
	defer tx.Rollback() // a no-op after Commit
	if err := fn(tx); errors.Is(err, errNoWrite) {
		return nil
	} else if err != nil {
		return err
	}
	err = tx.Commit()
	db.cache.forget() // this process's own commits are not left to the header to show
	if err == nil {
		db.full.Store(nil)
	}
	return db.fail(ctx, err)
}

var errNoWrite = errors.New("nothing to write")

// readTx runs read in a read transaction (one state of the file), the span of a SELECT on table.
func (db *DB) readTx(ctx context.Context, table string, read func(*sql.Tx) error) (err error) {
	ctx, end := db.span(ctx, "SELECT", table)
	defer func() { end(err) }()
	tx, err := db.sql.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return db.fail(ctx, err)
	}
	defer tx.Rollback()
	return read(tx)
}

// fail sorts an error of the file, naming it: no row is noRows[0] if given; context errors as they are; a row
// the schema refused, a bug (the stores check what they write); corruption or full disk, a fault; else ErrUnavailable.
func (db *DB) fail(ctx context.Context, err error, noRows ...error) error {
	if len(noRows) > 0 && errors.Is(err, sql.ErrNoRows) {
		return noRows[0]
	} else if ctx.Err() != nil && err != nil {
		return ctx.Err()
	} else if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, order.ErrUnavailable) || errors.Is(err, order.ErrCorrupt) {
		return err
	}
	unavailable := fmt.Errorf("%w: sqlite %s: %w", order.ErrUnavailable, db.path, err)
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return unavailable
	}
	switch e.Code() & 0xff { // the primary result code
	case sqlite3.SQLITE_CONSTRAINT:
		return fmt.Errorf("%s: refused by the schema: %w", db.path, err)
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return db.reportFault(&order.Fault{Kind: FaultCorrupt, Lasting: true, Public: "the database file is corrupt",
			Err: fmt.Errorf("%w: sqlite %s: %w", order.ErrCorrupt, db.path, err)})
	case sqlite3.SQLITE_FULL:
		f := &order.Fault{Kind: FaultFull, Public: "the disk of the database file is full", Err: unavailable}
		db.full.Store(f)
		return db.reportFault(f)
	}
	return unavailable
}

// corrupt reports a row that the service cannot use; the message names it ("order 7: …").
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %w", order.ErrCorrupt, fmt.Errorf(format, args...))
}

// OnFault makes report be told of every fault of the file from now on, and at once of a
// lasting fault found before. Call it before the DB is used concurrently; report must not block.
func (db *DB) OnFault(report func(*order.Fault)) {
	db.report.Store(&report)
	if f := db.lasting.Load(); f != nil {
		report(f)
	}
}

// Ready fails while a fault lasts, or after a full disk until a probe write (a row nothing reads) commits.
func (db *DB) Ready(ctx context.Context) error {
	if f := db.lasting.Load(); f != nil {
		return f
	} else if db.full.Load() == nil {
		return nil
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO settings (name, value) VALUES ('write-probe', randomblob(16))")
		return db.fail(ctx, err)
	})
}

// reportFault reports f, keeps it if it is the first lasting fault, and returns it.
func (db *DB) reportFault(f *order.Fault) *order.Fault {
	if f.Lasting {
		db.lasting.CompareAndSwap(nil, f)
	}
	if report := db.report.Load(); report != nil {
		(*report)(f)
	}
	return f
}

// watchFiles checks, until Close, that the paths still name the file and -shm (nil off WAL) Open found, as
// SQLite keeps its descriptors and never looks at the paths again: another file there is a lasting fault.
func (db *DB) watchFiles(file, shm os.FileInfo) {
	ctx, stop := context.WithCancel(context.Background())
	var watching sync.WaitGroup
	db.unwatch = func() { stop(); watching.Wait() }
	watching.Go(func() {
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		var f *order.Fault
		for f == nil {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			f = cmp.Or(db.moved("", file, FaultReplaced, "the database file was replaced or removed", "restart to open the one there now"),
				db.moved("-shm", shm, FaultShmRemoved, "the database's -shm file was removed", "stop every process on the file, then restart"))
		}
		db.reportFault(f)
	})
}

// moved returns the fault of kind if db.path+suffix no longer names the file was (nil: none to watch).
func (db *DB) moved(suffix string, was os.FileInfo, kind, public, then string) *order.Fault {
	if was == nil {
		return nil
	}
	now, err := os.Stat(db.path + suffix)
	how := "another file is there"
	switch {
	case errors.Is(err, os.ErrNotExist):
		how = "removed"
	case err != nil:
		how = err.Error()
	case os.SameFile(now, was):
		return nil
	}
	return &order.Fault{Kind: kind, Lasting: true, Public: public + " under the running server",
		Err: fmt.Errorf("%w: %s%s is no longer the file this process opened (%s): %s", order.ErrUnavailable, db.path, suffix, how, then)}
}

// Trace makes each query of the file for a request (not a read the cache answers) a child span of the
// request's, named as OpenTelemetry's database conventions name them ("SELECT orders"). Call it before serving.
func (db *DB) Trace(tp trace.TracerProvider) {
	db.tracer = tp.Tracer("github.com/petstore/orderd/internal/sqlitestore")
}

// span starts the span of op (an SQL verb) on table, and returns what ends it with the work's error.
func (db *DB) span(ctx context.Context, op, table string) (context.Context, func(error)) {
	if db.tracer == nil {
		return ctx, func(error) {}
	}
	ctx, span := db.tracer.Start(ctx, op+" "+table, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(semconv.DBSystemNameSQLite, semconv.DBOperationName(op), semconv.DBCollectionName(table)))
	return ctx, func(err error) {
		if errors.Is(err, order.ErrUnavailable) || errors.Is(err, order.ErrCorrupt) { // only a fault, not an answer
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

// schemaVersion is the file's user_version. schema/N.sql is what version N changed; a file of version v
// runs those of v+1 to schemaVersion in one transaction (schema_history_test.go has the texts each ran).
const schemaVersion = 7

//go:embed schema/*.sql
var schemaFiles embed.FS

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
		for n := v + 1; n <= schemaVersion && err == nil; n++ {
			var text []byte
			if text, err = schemaFiles.ReadFile(fmt.Sprintf("schema/%d.sql", n)); err == nil {
				_, err = tx.ExecContext(ctx, string(text))
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

// eventTime is SQLite's clock in timestampLayout, to the millisecond; one statement's events share its 'now'.
const eventTime = "strftime('%Y-%m-%dT%H:%M:%f000000Z', 'now')"

// newestEventID is the newest id the log ever gave: its newest row's, or once Trim dropped all, the newest dropped.
const newestEventID = "(SELECT max(coalesce(max(id), 0), (SELECT last_dropped FROM order_events_cut)) FROM order_events)"

// nextEventID is the id the triggers give (schema/6.sql says why).
const nextEventID = "max(" + newestEventID + " + 1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) * 1000)"
