package sqlitestore

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/order"
)

// readCache keeps what reads found, each with the wal-index header read BEFORE its query, and
// answers from it while the header reads the same: no process has committed since.
type readCache struct {
	wal     atomic.Pointer[walIndex] // nil: every read queries the file
	off     error                    // why wal is nil since Open
	version headerCache[struct{}, uint64]
	keys    headerCache[auth.Hash, auth.Key] // found only: random keys add nothing
	orders  headerCache[int64, orderRead]    // "no such order" too: a retried cancel is cheap
}

// ReadCache reports why the read cache is off (every read queries the file), or nil.
func (db *DB) ReadCache() error { return db.cache.off }

type orderRead struct {
	order order.Order
	found bool
}

// maxCachedEntries bounds a headerCache per header; reads past it query the file.
const maxCachedEntries = 4096

// headerCache is what queries found under one wal-index header, by what they looked up.
type headerCache[K comparable, V any] struct {
	cur atomic.Pointer[headerSet[K, V]]
}

type headerSet[K comparable, V any] struct {
	header walHeader
	mu     sync.RWMutex
	found  map[K]V
}

// at returns what was found for k, if it was found under header h.
func (c *headerCache[K, V]) at(h walHeader, k K) (V, bool) {
	set := c.cur.Load()
	if set == nil || set.header != h {
		var none V
		return none, false
	}
	set.mu.RLock()
	defer set.mu.RUnlock()
	v, ok := set.found[k]
	return v, ok
}

// keep caches v, found by a query begun after h was read; a new h starts a new set.
func (c *headerCache[K, V]) keep(h walHeader, k K, v V) {
	set := c.cur.Load()
	if set == nil || set.header != h {
		fresh := &headerSet[K, V]{header: h, found: map[K]V{}}
		if !c.cur.CompareAndSwap(set, fresh) {
			return
		}
		set = fresh
	}
	set.mu.Lock()
	defer set.mu.Unlock()
	if len(set.found) < maxCachedEntries {
		set.found[k] = v
	}
}

// cachedRead returns what c holds for k under the current header, or else what read finds.
func cachedRead[K comparable, V any](ctx context.Context, db *DB, c *headerCache[K, V], k K, read func(context.Context) (V, error)) (V, error) {
	readCtx, err := pointRead(ctx)
	if err != nil {
		var none V
		return none, err
	}
	h, cacheable := db.cache.wal.Load().header() // before the query
	if v, ok := c.at(h, k); cacheable && ok {
		return v, nil
	}
	v, err := read(readCtx)
	if err == nil && cacheable {
		c.keep(h, k, v)
	}
	return v, err
}

// forget drops everything: this process's own commits are not left to the header to show.
func (c *readCache) forget() {
	c.version.cur.Store(nil)
	c.keys.cur.Store(nil)
	c.orders.cur.Store(nil)
}
