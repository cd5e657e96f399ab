package sqlitestore

import (
	"sync"
	"sync/atomic"

	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/order"
)

// readCache keeps what the reads of every request (Orders.Version, Keys.Lookup, Orders.Get)
// found in the file, each with the wal-index header read BEFORE the query that found it, and
// answers from it while the header reads the same: no process has committed since, so the
// file still holds what was found (walindex.go gives the argument). When the header differs,
// or reads torn, or there is no wal-index to read, the request queries the file as it always
// did.
type readCache struct {
	wal     atomic.Pointer[walIndex] // nil: every read queries the file
	off     error                    // why wal is nil since Open (nil when it was mapped)
	version atomic.Pointer[cachedVersion]
	// keys holds only keys found: a lookup of a key that is not in the file always costs
	// its query, so random keys sent by anyone add nothing.
	keys headerCache[auth.Hash, auth.Key]
	// orders holds what reading an order by id found, the answer "no such order" included,
	// so that a retried cancel or read of an unknown id is answered from memory too; the
	// bound of a headerCache caps what random ids can add.
	orders headerCache[int64, orderRead]
}

// ReadCache reports why the read cache is off, or nil when it is on: Open mapped the file's
// wal-index, so that a request reads nothing from the file that no one has changed since it
// was last read. Off, every read queries the file, as correct and slower; the service logs
// which, once, when it starts.
func (db *DB) ReadCache() error { return db.cache.off }

// orderRead is what reading an order by its id found: the order, or that there is none.
type orderRead struct {
	order order.Order
	found bool
}

// cachedVersion is the orders' version as found after header was read.
type cachedVersion struct {
	header walHeader
	value  uint64
}

// maxCachedEntries bounds what a headerCache keeps for one header, and every commit, in any
// process, starts an empty set. The bound is for a file read in more places between two
// commits than this: the reads past it query the file on every request, as without a cache.
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
	v, ok := set.found[k]
	set.mu.RUnlock()
	return v, ok
}

// keep caches v, found for k by a query that started after h was read. The set holds what
// was found under one header: a find under another header than the set's starts a new set,
// unless another request has just done so.
func (c *headerCache[K, V]) keep(h walHeader, k K, v V) {
	set := c.cur.Load()
	if set == nil || set.header != h {
		fresh := &headerSet[K, V]{header: h, found: map[K]V{}}
		if !c.cur.CompareAndSwap(set, fresh) {
			return // another request replaced the set meanwhile: leave it be
		}
		set = fresh
	}
	set.mu.Lock()
	if len(set.found) < maxCachedEntries {
		set.found[k] = v
	}
	set.mu.Unlock()
}

// forget drops everything cached.
func (c *headerCache[K, V]) forget() { c.cur.Store(nil) }

// header reads the wal-index header; ok is false when it cannot vouch for a cached value.
func (c *readCache) header() (walHeader, bool) { return c.wal.Load().header() }

// versionAt returns the cached version, if it was found under header h.
func (c *readCache) versionAt(h walHeader) (uint64, bool) {
	if v := c.version.Load(); v != nil && v.header == h {
		return v.value, true
	}
	return 0, false
}

// keepVersion caches value, found by a query that started after h was read.
func (c *readCache) keepVersion(h walHeader, value uint64) {
	c.version.Store(&cachedVersion{header: h, value: value})
}

// forget drops everything cached. The header moves with this process's own commits as with
// any other's (they write the same wal-index), so this is not what makes them seen; it is
// called after each commit of the process all the same (DB.commit), so that what this
// process writes does not depend on the detector to be seen by its own requests.
func (c *readCache) forget() {
	c.version.Store(nil)
	c.keys.forget()
	c.orders.forget()
}
