// Package sqlitestore keeps what the embedded mode owns (orders, pets, API keys, the
// page-token secret, webhooks) in one SQLite file that any number of processes may open at
// once; each sees the others' commits at its next call (docs/design.md, "Consistency").
// Failures wrap order.ErrUnavailable; a damaged file or an unusable row, order.ErrCorrupt.
package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/petstore/orderd/internal/order"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	_ "modernc.org/sqlite" // the database/sql driver "sqlite", in pure Go: the binary stays static
)

// DB is one open SQLite file, safe for concurrent use; its stores share its connections.
type DB struct {
	path   string
	sql    *sql.DB
	writes chan struct{} // this process's writers, one at a time; SQLite's busy handler is for others
	pin    *sql.Conn     // held unused: its SHARED lock keeps the -shm from being deleted
	cache  readCache
	faults faults
	tracer trace.Tracer // nil: no spans (Trace)
}

// Open opens the SQLite file at path, creating or migrating its schema, and refuses one this
// process cannot write. Writes wait up to busyTimeout (0: 5 s) for another process's write.
// Every connection runs:
//   - journal_mode=WAL: readers and the writer never wait for each other;
//   - synchronous=FULL: a commit (a cancel answered 204) survives a crash of the machine;
//   - _txlock=immediate: a write takes the write lock at BEGIN, never failing later on an
//     outdated snapshot (a ReadOnly transaction begins deferred).
func Open(path string, busyTimeout time.Duration) (*DB, error) {
	if busyTimeout <= 0 {
		busyTimeout = 5 * time.Second
	}
	ctx := context.Background()
	db := &DB{path: path, writes: make(chan struct{}, 1)}
	// A missing file is created private to its owner; the -wal and -shm get its mode.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		err = f.Close()
	} else if errors.Is(err, fs.ErrExist) {
		err = nil
	}
	if err == nil {
		db.sql, err = sql.Open("sqlite", dsn(path, busyTimeout))
	}
	if err != nil {
		return nil, db.fail(ctx, err)
	}
	// Keep every connection opened (each runs the pragmas and reads the schema); +1: the pin.
	conns := max(4, 2*runtime.GOMAXPROCS(0)) + 1
	db.sql.SetMaxOpenConns(conns)
	db.sql.SetMaxIdleConns(conns)
	if err = db.migrate(ctx); err == nil {
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
		db.cache.open(db.path)
	}
	db.watchFiles(file, shm)
	return nil
}

// dsn is the file's URI with the settings of every connection (Open says why each).
func dsn(path string, busyTimeout time.Duration) string {
	escape := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return fmt.Sprintf("file:%s?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate",
		escape.Replace(filepath.Clean(path)), busyTimeout.Milliseconds())
}

// Close closes the file. Calls made after it fail with order.ErrUnavailable.
func (db *DB) Close() error {
	db.faults.unwatch()
	db.pin.Close()
	err := db.sql.Close()
	return errors.Join(err, db.cache.close()) // the wal-index's descriptor must outlive the connections
}

// beginWrite starts a write transaction after this process's earlier ones; call done after.
func (db *DB) beginWrite(ctx context.Context) (tx *sql.Tx, done func(), err error) {
	// A lasting fault forbids writes (docs/design.md, Errors), but corruption: SQLite refuses a
	// write that meets a damaged page itself.
	if f := db.faults.lasting.Load(); f != nil && f.Kind != FaultCorrupt {
		return nil, nil, f
	}
	select {
	case db.writes <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	if tx, err = db.sql.BeginTx(ctx, nil); err != nil {
		<-db.writes
		return nil, nil, db.fail(ctx, err)
	}
	return tx, func() {
		tx.Rollback() // a no-op after Commit
		<-db.writes
	}, nil
}

// write runs fn in a write transaction and commits it. fn sorts its own errors (fail), and
// returns errNoWrite to roll back a transaction that changed nothing: only a commit that
// wrote shows that a full disk has room again.
func (db *DB) write(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, done, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer done()
	if err := fn(tx); errors.Is(err, errNoWrite) {
		return nil
	} else if err != nil {
		return err
	}
	return db.fail(ctx, db.commit(tx))
}

var errNoWrite = errors.New("nothing to write")

// commit commits tx and empties the read cache; it ends a full disk's fault: there was room.
func (db *DB) commit(tx *sql.Tx) error {
	defer db.cache.forget()
	if err := tx.Commit(); err != nil {
		return err
	}
	db.faults.full.Store(nil)
	return nil
}

// readTx runs read in a read transaction: what it reads is one state of the file.
func (db *DB) readTx(ctx context.Context, read func(*sql.Tx) error) error {
	tx, err := db.sql.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return db.fail(ctx, err)
	}
	defer tx.Rollback()
	return read(tx)
}

// Trace makes each query of the file for a request (not a read the cache answers) a child span
// of the request's, named as OpenTelemetry's database conventions name them ("SELECT orders").
// Call it before serving; without it a span costs a nil check.
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
		// Not found or not cancellable is the store's answer; only a fault is the span's error.
		if errors.Is(err, order.ErrUnavailable) || errors.Is(err, order.ErrCorrupt) {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}
