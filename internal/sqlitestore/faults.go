package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petstore/orderd/internal/order"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The kinds of order.Fault this package reports (docs/operations.md, "When the SQLite file is damaged or replaced", has their table).
const (
	FaultCorrupt    = "corrupt"     // the file is damaged or not a database; it lasts
	FaultFull       = "full"        // no room for a write, until a write commits again
	FaultReplaced   = "replaced"    // the path no longer names the file opened; it lasts
	FaultShmRemoved = "shm_removed" // the file's -shm was deleted or replaced; it lasts
)

type faults struct {
	report  atomic.Pointer[func(*order.Fault)]
	lasting atomic.Pointer[order.Fault] // the first fault that lasts until a restart
	full    atomic.Pointer[order.Fault] // until a write commits again
	unwatch func()                      // stops watchFiles
}

// fail sorts an error of the file, naming it: context errors as they are; a row the schema refused
// (a bug: the stores check what they write); corruption or a full disk, a fault; else ErrUnavailable.
func (db *DB) fail(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
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
		db.faults.full.Store(f)
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
	db.faults.report.Store(&report)
	if f := db.faults.lasting.Load(); f != nil {
		report(f)
	}
}

// Ready fails while a fault lasts, or after a full disk until a probe write (a row nothing reads) commits.
func (db *DB) Ready(ctx context.Context) error {
	if f := db.faults.lasting.Load(); f != nil {
		return f
	} else if db.faults.full.Load() == nil {
		return nil
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES ('write-probe', randomblob(16))
			ON CONFLICT (name) DO UPDATE SET value = excluded.value`)
		return db.fail(ctx, err)
	})
}

// reportFault reports f, keeps it if it is the first lasting fault, and returns it.
func (db *DB) reportFault(f *order.Fault) *order.Fault {
	if f.Lasting {
		db.faults.lasting.CompareAndSwap(nil, f)
	}
	if report := db.faults.report.Load(); report != nil {
		(*report)(f)
	}
	return f
}

// watchFiles checks every 250 ms, until Close, that the paths still name the file and the -shm
// (nil off WAL) that Open found: SQLite keeps its descriptors and never looks at the paths
// again. A path that names another file is a fault that lasts.
func (db *DB) watchFiles(file, shm os.FileInfo) {
	stop, stopped := make(chan struct{}), make(chan struct{})
	db.faults.unwatch = sync.OnceFunc(func() { close(stop); <-stopped })
	go func() {
		defer close(stopped)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if how := moved(db.path, file); how != "" {
				db.reportFault(&order.Fault{Kind: FaultReplaced, Lasting: true, Public: "the database file was replaced or removed under the running server",
					Err: fmt.Errorf("%w: %s is no longer the file this process opened (%s): restart to open the one there now", order.ErrUnavailable, db.path, how)})
				return
			}
			if how := moved(db.path+"-shm", shm); how != "" {
				db.reportFault(&order.Fault{Kind: FaultShmRemoved, Lasting: true, Public: "the database's -shm file was removed under the running server",
					Err: fmt.Errorf("%w: %s-shm is no longer the wal-index this process opened (%s): stop every process on the file, then restart", order.ErrUnavailable, db.path, how)})
				return
			}
		}
	}()
}

// moved says how path no longer names the file was (nil: none to watch), or "" if it still does.
func moved(path string, was os.FileInfo) string {
	if was == nil {
		return ""
	}
	now, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "removed"
	case err != nil:
		return err.Error()
	case !os.SameFile(now, was):
		return "another file is there"
	}
	return ""
}
