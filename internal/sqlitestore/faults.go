package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petstore/orderd/internal/store"
)

// The kinds of store.Fault this package reports.
const (
	// FaultCorrupt: SQLite found the file damaged (SQLITE_CORRUPT) or not a database
	// (SQLITE_NOTADB). It lasts: nothing the service does mends a damaged page.
	FaultCorrupt = "corrupt"
	// FaultFull: the disk, or SQLite's page limit, has no room for a write (SQLITE_FULL).
	// Each write that meets it fails; it ends when there is room again.
	FaultFull = "full"
	// FaultReplaced: the path no longer names the file this process opened (moved, deleted,
	// or replaced, by a restore for instance). It lasts, and no write is made: this process
	// would write into a file nobody else opens any more.
	FaultReplaced = "replaced"
	// FaultShmRemoved: the file's -shm (the wal-index every process shares) was deleted or
	// replaced. It lasts, and no write is made: another process that opens the file makes a
	// new -shm, and each would then overwrite the other's commits in the WAL.
	FaultShmRemoved = "shm_removed"
)

// watchEvery is how often the watcher checks that the paths still name the files opened.
// A stat of two paths costs microseconds; four a second find a replacement well within a
// second.
const watchEvery = 250 * time.Millisecond

// faults is what a DB knows of the faults of its file, and whom it tells.
type faults struct {
	report  atomic.Pointer[func(*store.Fault)]
	lasting atomic.Pointer[store.Fault] // the first fault that lasts until a restart
	// full is the last write's full disk, until a write commits again: while it is set the
	// file cannot be written, and Ready tries a write of its own to learn when it can.
	full    atomic.Pointer[store.Fault]
	stop    chan struct{}
	stopped sync.WaitGroup
}

// OnFault makes report be told of every fault of the file from now on: each operation that
// meets corruption or a full disk, and once, the replacement of the file or of its -shm
// (found within a second, without a request). A lasting fault found before the call is told
// at once. Call it before the DB is used concurrently; report must not block.
func (db *DB) OnFault(report func(*store.Fault)) {
	db.faults.report.Store(&report)
	if f := db.faults.lasting.Load(); f != nil {
		report(f)
	}
}

// Fault returns the fault that lasts until a restart, a *store.Fault, or nil: the file is
// corrupt, or was replaced, or its -shm removed, under this process.
func (db *DB) Fault() error {
	if f := db.faults.lasting.Load(); f != nil {
		return f
	}
	return nil
}

// Ready reports whether the file can do the work of a request now: not while a fault lasts,
// nor while the last write found the disk full and none has committed since. Then it makes a
// write of its own (probeWrite), so that the service is ready again as soon as there is room,
// with no request needed to find out; the probe costs nothing while the disk has room.
func (db *DB) Ready(ctx context.Context) error {
	if err := db.Fault(); err != nil {
		return err
	}
	if db.faults.full.Load() == nil {
		return nil
	}
	return db.probeWrite(ctx)
}

// probeWrite writes a row of its own in the settings table, which nothing reads, and commits:
// a commit that succeeds ends the full state (commit).
func (db *DB) probeWrite(ctx context.Context) error {
	tx, done, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer done()
	if _, err := tx.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES ('write-probe', randomblob(16))
		ON CONFLICT (name) DO UPDATE SET value = excluded.value`); err != nil {
		return db.fail(ctx, err)
	}
	return db.fail(ctx, db.commit(tx))
}

// reportFault reports f, and keeps it as the lasting fault when it lasts and none came first.
func (db *DB) reportFault(f *store.Fault) {
	if f.Lasting {
		db.faults.lasting.CompareAndSwap(nil, f)
	}
	if report := db.faults.report.Load(); report != nil {
		(*report)(f)
	}
}

// refuseWrites returns the fault that forbids writing, or nil: the file was replaced or its
// -shm removed. Corruption does not: what can still be written is, and SQLite refuses a
// write that meets a damaged page itself.
func (db *DB) refuseWrites() error {
	if f := db.faults.lasting.Load(); f != nil && f.Kind != FaultCorrupt {
		return f
	}
	return nil
}

// watchFiles checks every watchEvery, until Close, that db.path and its -shm still name the
// files that Open opened (os.SameFile: device and inode). SQLite keeps its descriptors of the
// files it opened and never looks at the paths again, so a file replaced under it goes on
// being served, and its writes go where nobody reads them; nor does it notice its -shm
// deleted (walindex.go says why that cannot happen by SQLite's own doing). shm is nil when
// the file has no -shm (not in WAL mode): the file alone is watched.
func (db *DB) watchFiles(file, shm os.FileInfo) {
	db.faults.stop = make(chan struct{})
	db.faults.stopped.Add(1)
	go func() {
		defer db.faults.stopped.Done()
		tick := time.NewTicker(watchEvery)
		defer tick.Stop()
		for {
			select {
			case <-db.faults.stop:
				return
			case <-tick.C:
			}
			if f := db.checkFiles(file, shm); f != nil {
				db.reportFault(f)
				return // it lasts until a restart: nothing more to watch for
			}
		}
	}()
}

// checkFiles returns the fault of a path that no longer names the file opened, or nil.
func (db *DB) checkFiles(file, shm os.FileInfo) *store.Fault {
	if now, err := os.Stat(db.path); err != nil || !os.SameFile(now, file) {
		return &store.Fault{Kind: FaultReplaced, Lasting: true, Public: "the database file was replaced or removed under the running server",
			Err: fmt.Errorf("%w: %s is no longer the file this process opened (%s): restart to open the one there now", store.ErrUnavailable, db.path, changed(err))}
	}
	if shm == nil {
		return nil
	}
	if now, err := os.Stat(db.path + "-shm"); err != nil || !os.SameFile(now, shm) {
		return &store.Fault{Kind: FaultShmRemoved, Lasting: true, Public: "the database's -shm file was removed under the running server",
			Err: fmt.Errorf("%w: %s-shm is no longer the wal-index this process opened (%s): stop every process on the file, then restart", store.ErrUnavailable, db.path, changed(err))}
	}
	return nil
}

// changed says how a watched path changed: it is gone, or names another file.
func changed(err error) string {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "removed"
	case err != nil:
		return err.Error()
	}
	return "another file is there"
}

// stopWatching ends watchFiles, if it runs.
func (db *DB) stopWatching() {
	if db.faults.stop != nil {
		close(db.faults.stop)
		db.faults.stopped.Wait()
		db.faults.stop = nil
	}
}
