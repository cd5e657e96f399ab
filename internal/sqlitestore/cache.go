package sqlitestore

import (
	"context"
	"errors"
	"sync"
)

// readCache answers Version and Lookup from memory while the wal-index header read before the
// query that found the answer is unchanged: every commit of any process writes a new header
// (docs/design.md, "Consistency"). SQLite writes the copy at 48 first and a reader
// trusts 0 and 48 only if equal (wal.c, walIndexTryHdr): a torn read counts as a change.
// To switch it off (an ablation), leave wal nil: every read then queries the file.
type readCache struct {
	wal    *walIndex // nil: every read queries the file
	off    error     // why wal is nil
	mu     sync.RWMutex
	header walHeader   // what found was read under; zeros match no header a commit wrote
	found  map[any]any // at most 4096: the version (key versionKey) and keys found by hash
}

type versionKey struct{}

// walHeader is one copy of the wal-index header, as twelve words in the host's byte order.
type walHeader [12]uint32

// ErrReadCacheUnsupported is why the cache is off by design: off unix, or memory pages over 32 KiB.
var ErrReadCacheUnsupported = errors.New("the wal-index cannot be mapped on this system")

// ReadCache reports why the read cache is off (every read queries the file), or nil.
func (db *DB) ReadCache() error { return db.cache.off }

func (c *readCache) open(path string) { c.wal, c.off = openWalIndex(path + "-shm") }

// close releases the wal-index, after the connections are closed.
func (c *readCache) close() error {
	c.forget()
	return c.wal.release()
}

// forget drops everything: this process's own commits are not left to the header to show.
func (c *readCache) forget() {
	c.mu.Lock()
	c.header, c.found = walHeader{}, nil
	c.mu.Unlock()
}

// cachedRead answers k from the cache under the current header, else reads it from table and
// keeps it under the header read before the query (k is an interface only there: a hit
// allocates nothing). A read of one row by index takes
// microseconds: its context is not watched, as database/sql and the driver would each start a
// goroutine to.
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
