package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite", in pure Go: the binary stays static
)

// DefaultBusyTimeout is how long a write waits for another process's write to finish before
// it fails with store.ErrUnavailable.
const DefaultBusyTimeout = 5 * time.Second

// DB is one SQLite file, open. Its stores (NewOrders, NewPets, NewKeys) share its connections.
// It is safe for concurrent use, and any number of processes may open the same file.
type DB struct {
	path  string
	sql   *sql.DB
	stmts statements
	// writes lets one write transaction of this process at a time ask SQLite for the write
	// lock, so that its writers queue here rather than in SQLite's sleeping busy handler,
	// which is left to arbitrate between processes. Reads never take it.
	writes chan struct{}
	// pin is a connection held for the DB's lifetime, never used: its SHARED lock on the
	// file keeps the -shm file that cache reads from being deleted by another process
	// (walindex.go).
	pin   *sql.Conn
	cache readCache
	// faults are the faults found in the file and whom to tell (faults.go).
	faults faults
}

// Open opens the SQLite file at path, creating it and its schema if they are missing, and
// migrating an older schema. A write waits up to busyTimeout (DefaultBusyTimeout if zero)
// for another process's write.
func Open(path string, busyTimeout time.Duration) (*DB, error) {
	if busyTimeout <= 0 {
		busyTimeout = DefaultBusyTimeout
	}
	ctx := context.Background()
	db := &DB{path: path, writes: make(chan struct{}, 1)}
	if err := createPrivate(path); err != nil {
		return nil, db.fail(ctx, err)
	}
	var err error
	if db.sql, err = sql.Open("sqlite", dsn(path, busyTimeout)); err != nil {
		return nil, db.fail(ctx, err)
	}
	// Opening a connection runs the pragmas and reads the schema; keep every connection
	// opened, so that a busy minute does not open and close them over and over.
	// One more is the pin.
	conns := max(4, 2*runtime.GOMAXPROCS(0)) + 1
	db.sql.SetMaxOpenConns(conns)
	db.sql.SetMaxIdleConns(conns)
	if err := db.migrate(ctx); err != nil {
		db.sql.Close()
		return nil, err
	}
	if err := db.stmts.prepare(ctx, db.sql); err != nil {
		db.sql.Close()
		return nil, db.fail(ctx, err)
	}
	if err := db.watch(ctx); err != nil {
		db.stmts.close()
		db.sql.Close()
		return nil, db.fail(ctx, err)
	}
	return db, nil
}

// watch pins a connection that has read the file in WAL mode, maps the file's wal-index for
// the read cache, and starts watching the paths of the file and of its -shm (watchFiles).
// Where the wal-index cannot be mapped, the cache stays off and every read queries the file.
// A file this process cannot write is refused (see writable).
func (db *DB) watch(ctx context.Context) (err error) {
	if db.pin, err = db.sql.Conn(ctx); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			// db.sql.Close does not close a connection in use: its handle, descriptors and
			// locks would outlive the failed Open.
			db.pin.Close()
		}
	}()
	var mode string
	if err := db.pin.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	var version int64
	if err := db.pin.QueryRowContext(ctx, "SELECT value FROM orders_version").Scan(&version); err != nil {
		return err
	}
	if err := db.writable(); err != nil {
		return err
	}
	// The files as the pinned connection found them: it has read the file, so SQLite has
	// opened it and, in WAL mode, its -shm.
	file, err := os.Stat(db.path)
	if err != nil {
		return err
	}
	var shm os.FileInfo
	if mode != "wal" {
		db.cache.off = fmt.Errorf("the file's journal mode is %q, not WAL", mode)
	} else {
		if shm, err = os.Stat(db.path + "-shm"); err != nil {
			return err
		}
		if wal, err := openWalIndex(db.path); err != nil {
			db.cache.off = err
		} else {
			db.cache.wal.Store(wal)
		}
	}
	db.watchFiles(file, shm)
	return nil
}

// writable refuses a file that SQLite opened read-only, as it does, silently, when the file,
// its directory or the filesystem cannot be written by this process: every process on the
// file writes to it (a cancel, a key, the page-token secret, which the first process that
// needs it makes), so it would serve what it reads and fail every write.
func (db *DB) writable() error {
	var readOnly bool
	err := db.pin.Raw(func(c any) error {
		conn, ok := c.(interface{ IsReadOnly(string) (bool, error) })
		if !ok {
			return nil // another driver: its writes will tell
		}
		var err error
		readOnly, err = conn.IsReadOnly("main")
		return err
	})
	switch {
	case err != nil:
		return err
	case readOnly:
		return fmt.Errorf("SQLite file %s: opened read-only, but orderd writes to it (cancels, keys, the page-token secret): "+
			"make the file, its directory and its -wal and -shm files writable by this process", db.path)
	}
	return nil
}

// createPrivate creates the file, when it does not exist yet, readable and writable by its
// owner only: it holds the orders and the keys' hashes, which are nobody else's business.
// SQLite gives its -wal and -shm files the permissions of the database file.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// dsn is the driver's name of the file, with the settings every connection gets:
//
//   - journal_mode=WAL: readers never wait for a writer, nor a writer for readers, so the
//     requests of a server go on while `orderd import` or `orderd keys` writes.
//   - synchronous=FULL: in WAL mode, each commit fsyncs the WAL before it returns, so a
//     cancel answered 204 survives a crash of the machine, not only of the process. NORMAL
//     fsyncs only at checkpoints: a power cut could lose the last commits, which the
//     clients were told had happened.
//   - busy_timeout: a write that finds another process writing waits for it instead of
//     failing at once with SQLITE_BUSY.
//   - _txlock=immediate: every transaction this package begins but Find's is a write, so it
//     takes the write lock at BEGIN; a transaction that read first and asked for the lock
//     later could fail without waiting, its snapshot outdated by another writer. Find's
//     transaction is ReadOnly, which the driver begins deferred: one snapshot, no write lock.
//
// The path is made a file: URI, escaped, so that any file name works.
func dsn(path string, busyTimeout time.Duration) string {
	escape := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate")
	return "file:" + escape.Replace(filepath.Clean(path)) + "?" + q.Encode()
}

// Close closes the file. Calls made after it fail with store.ErrUnavailable.
func (db *DB) Close() error {
	db.stopWatching()
	db.stmts.close()
	db.pin.Close()
	err := db.sql.Close()
	// The wal-index last: releasing it may close a descriptor of the -shm file, which must
	// not happen while a connection of this DB still uses the file (walIndexes says why).
	// Calls after Close find no header and go to the closed database, which fails them.
	wal := db.cache.wal.Swap(nil)
	db.cache.forget()
	return errors.Join(err, wal.release())
}

// beginWrite starts a write transaction, after the writes of this process before it.
// The caller calls the returned done once the transaction has ended.
func (db *DB) beginWrite(ctx context.Context) (tx *sql.Tx, done func(), err error) {
	if err := db.refuseWrites(); err != nil {
		return nil, nil, err
	}
	select {
	case db.writes <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	done = func() {
		tx.Rollback() // a no-op after Commit
		<-db.writes
	}
	if tx, err = db.sql.BeginTx(ctx, nil); err != nil {
		<-db.writes
		return nil, nil, db.fail(ctx, err)
	}
	return tx, done, nil
}

// commit commits tx, a transaction of beginWrite, and empties the read cache (readCache.forget
// says why). A transaction that ends in a rollback changed nothing and leaves the cache be:
// the cancel of an unknown order is one, on every such request. A commit ends a full disk's
// state: there was room for this write (Ready).
func (db *DB) commit(tx *sql.Tx) error {
	defer db.cache.forget()
	if err := tx.Commit(); err != nil {
		return err
	}
	if db.faults.full.Load() != nil {
		db.faults.full.Store(nil)
	}
	return nil
}

// pointRead is the context of a read of one row through an index, on every request. Such a
// read takes microseconds and, in WAL mode, does not wait for writers, so watching the
// caller's context during it is not worth its price: database/sql and the driver each start
// a goroutine per query to do so, which makes these reads three times slower
// (BenchmarkVersion, BenchmarkLookup). A context that has already ended still ends the call.
// The one wait left is a WAL recovery after a crash, bounded by the busy timeout.
func pointRead(ctx context.Context) (context.Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return context.WithoutCancel(ctx), nil
}
