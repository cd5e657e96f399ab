package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/petstore/orderd/internal/order"
)

// Version moves with every change to the orders, whoever makes it: a change that records an
// event moves the newest event id, which never goes back; a DELETE moves orders_version.
func (s *Orders) Version(ctx context.Context) (uint64, error) {
	return cachedRead(ctx, s.db, "orders_version", versionKey{}, func(readCtx context.Context) (v uint64, err error) {
		err = s.db.sql.QueryRowContext(readCtx, "SELECT value + "+newestEventID+" FROM orders_version").Scan(&v)
		return v, s.db.fail(ctx, err)
	})
}

// Lookup returns the key with hash h.
func (s *Keys) Lookup(ctx context.Context, h order.Hash) (order.Key, error) {
	return cachedRead(ctx, s.db, "api_keys", h, func(readCtx context.Context) (order.Key, error) {
		k, err := scanKey(s.db.sql.QueryRowContext(readCtx, "SELECT "+keyColumns+" FROM api_keys WHERE hash = ?", string(h)))
		return k, s.db.fail(ctx, err, order.ErrKeyNotFound)
	})
}

// readCache answers Version and Lookup from memory while the wal-index header read before the query that
// found the answer is unchanged: every commit of any process writes a new header (docs/design.md, "Consistency").
type readCache struct {
	wal    *walIndex // nil: every read queries the file
	off    error     // why wal is nil
	mu     sync.RWMutex
	header walHeader   // what found was read under; zeros match no header a commit wrote
	found  map[any]any // at most 4096: the version (key versionKey) and keys found by hash
}

type versionKey struct{}

// ErrReadCacheUnsupported is why the cache is off by design: off unix, or memory pages over 32 KiB.
var ErrReadCacheUnsupported = errors.New("the wal-index cannot be mapped on this system")

// ReadCache reports why the read cache is off (every read queries the file), or nil.
func (db *DB) ReadCache() error { return db.cache.off }

func (c *readCache) forget() {
	c.mu.Lock()
	c.header, c.found = walHeader{}, nil
	c.mu.Unlock()
}

// cachedRead answers k from the cache under the current header, else reads it from table and keeps it under
// the header read before the query (k is an interface only there: a hit allocates nothing). Its context is not
// watched: a one-row read by index takes microseconds, and database/sql and the driver would each start a goroutine.
func cachedRead[K comparable, V any](ctx context.Context, db *DB, table string, k K, read func(context.Context) (V, error)) (V, error) {
	if err := ctx.Err(); err != nil {
		return *new(V), err
	}
	c := &db.cache
	h, cacheable := c.wal.header()
	if cacheable {
		c.mu.RLock()
		v, ok := c.found[k]
		ok = ok && c.header == h
		c.mu.RUnlock()
		if ok {
			return v.(V), nil
		}
	}
	readCtx, end := db.span(context.WithoutCancel(ctx), "SELECT", table)
	v, err := read(readCtx)
	if end(err); err == nil && cacheable {
		c.mu.Lock()
		if c.header != h {
			c.header, c.found = h, map[any]any{}
		}
		if len(c.found) < 4096 {
			c.found[k] = v
		}
		c.mu.Unlock()
	}
	return v, err
}

// walHeader is one copy of the wal-index header, as twelve words in the host's byte order.
type walHeader [12]uint32

// header reads the wal-index header, and reports whether a commit wrote it: both copies agree and are
// initialised (iVersion 3007000; a new -shm is zeros). SQLite writes the copy at 48 first and a reader trusts
// the two only if equal (wal.c, walIndexTryHdr): a torn read counts as a change. Atomic loads: another process
// writes, and the first copy is read first. Should the page fault all the same, this request reads the file.
func (w *walIndex) header() (h walHeader, ok bool) {
	if w == nil {
		return walHeader{}, false
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			h, ok = walHeader{}, false
		}
	}()
	words := (*[2 * len(h)]uint32)(unsafe.Pointer(unsafe.SliceData(w.mem)))
	var copies [2]walHeader
	for i := range words { // all of the first copy, then the second: SQLite writes them in the other order
		copies[i/len(h)][i%len(h)] = atomic.LoadUint32(&words[i])
	}
	return copies[0], copies[0] == copies[1] && copies[0][0] == 3007000
}

// walIndex is a -shm file's first page, mapped read-only and shared once per process and file: closing ANY
// descriptor of the file drops the process's POSIX locks, SQLite's too, so its one is closed when no DB uses it.
type walIndex struct {
	info os.FileInfo
	file *os.File
	mem  []byte
	refs int // DBs using it; guarded by walIndexes
}

var walIndexes struct {
	sync.Mutex
	open []*walIndex
}

// openWalIndex maps the -shm file shm, found as info, which a WAL connection has sized. It
// opens no second descriptor of a file the process has mapped, and none of a file it would refuse.
func openWalIndex(shm string, info os.FileInfo) (*walIndex, error) {
	walIndexes.Lock()
	defer walIndexes.Unlock()
	for _, w := range walIndexes.open {
		if os.SameFile(w.info, info) {
			w.refs++
			return w, nil
		}
	}
	if info.Size() < int64(os.Getpagesize()) { // reading a page past the file's end faults
		return nil, fmt.Errorf("%w: %s is %d bytes, less than a memory page (%d bytes)", ErrReadCacheUnsupported, shm, info.Size(), os.Getpagesize())
	}
	w := &walIndex{info: info, refs: 1}
	var err error
	if w.file, err = os.Open(shm); err != nil {
		return nil, err
	}
	if info, err = w.file.Stat(); err == nil && !os.SameFile(info, w.info) {
		err = errors.New("it changed while being opened")
	}
	if err == nil {
		w.mem, err = mapPage(w.file)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("map %s: %w", shm, err), w.file.Close())
	}
	walIndexes.open = append(walIndexes.open, w)
	return w, nil
}

// release ends a DB's use of w, after its connections are closed; the last use unmaps.
func (w *walIndex) release() error {
	if w == nil {
		return nil
	}
	walIndexes.Lock()
	defer walIndexes.Unlock()
	if w.refs--; w.refs > 0 {
		return nil
	}
	walIndexes.open = slices.DeleteFunc(walIndexes.open, func(o *walIndex) bool { return o == w })
	return errors.Join(unmap(w.mem), w.file.Close())
}
