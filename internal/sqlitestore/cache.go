package sqlitestore

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/petstore/orderd/internal/order"
)

// readCache answers from earlier reads while the wal-index header read before them is unchanged.
type readCache struct {
	wal     atomic.Pointer[walIndex] // nil: every read queries the file
	off     error                    // why wal is nil since Open
	version atomic.Pointer[headerCache[struct{}, uint64]]
	keys    atomic.Pointer[headerCache[order.Hash, order.Key]] // found only: random keys add none
}

// ReadCache reports why the read cache is off (every read queries the file), or nil.
func (db *DB) ReadCache() error { return db.cache.off }

// maxCachedEntries bounds a headerCache per header; reads past it query the file.
const maxCachedEntries = 4096

// headerCache is what queries found under one wal-index header, by what they looked up.
type headerCache[K comparable, V any] struct {
	header walHeader
	mu     sync.RWMutex
	found  map[K]V
}

// cachedRead answers k from c under the current header, else reads it from table and keeps it
// under that header.
func cachedRead[K comparable, V any](ctx context.Context, db *DB, c *atomic.Pointer[headerCache[K, V]], table string, k K, read func(context.Context) (V, error)) (V, error) {
	if err := ctx.Err(); err != nil {
		var none V
		return none, err
	}
	// A read of one row by index takes microseconds: its context is not watched, as
	// database/sql and the driver would each start a goroutine to.
	readCtx := context.WithoutCancel(ctx)
	h, cacheable := db.cache.wal.Load().header() // before the query
	if set := c.Load(); cacheable && set != nil && set.header == h {
		set.mu.RLock()
		v, ok := set.found[k]
		set.mu.RUnlock()
		if ok {
			return v, nil
		}
	}
	readCtx, end := db.span(readCtx, "SELECT", table)
	v, err := read(readCtx)
	end(err)
	if err != nil || !cacheable {
		return v, err
	}
	set := c.Load()
	if set == nil || set.header != h {
		fresh := &headerCache[K, V]{header: h, found: map[K]V{}}
		if !c.CompareAndSwap(set, fresh) {
			return v, nil
		}
		set = fresh
	}
	set.mu.Lock()
	if len(set.found) < maxCachedEntries {
		set.found[k] = v
	}
	set.mu.Unlock()
	return v, nil
}

// forget drops everything: this process's own commits are not left to the header to show.
func (c *readCache) forget() {
	c.version.Store(nil)
	c.keys.Store(nil)
}
