package sqlitestore

import (
	"sync"
	"sync/atomic"

	"github.com/petstore/orderd/internal/auth"
)

// readCache keeps what the reads of every request (Orders.Version, Keys.Lookup) found in the
// file, each with the wal-index header read BEFORE the query that found it, and answers from
// it while the header reads the same: no process has committed since, so the file still
// holds what was found (walindex.go gives the argument). When the header differs, or reads
// torn, or there is no wal-index to read, the request queries the file as it always did.
type readCache struct {
	wal     atomic.Pointer[walIndex] // nil: every read queries the file
	version atomic.Pointer[cachedVersion]
	keys    atomic.Pointer[cachedKeys]
}

// cachedVersion is the orders' version as found after header was read.
type cachedVersion struct {
	header walHeader
	value  uint64
}

// maxCachedKeys bounds the keys kept for one header. Only keys found are kept, so a lookup of
// a key that is not in the file always costs its query, and random keys sent by anyone grow
// nothing; and every commit, in any process, starts an empty set. The bound is for the file
// with more keys in use between two commits than this: the keys past it are looked up in the
// file on every request, as without a cache.
const maxCachedKeys = 4096

// cachedKeys are the keys found by their hash after header was read.
type cachedKeys struct {
	header walHeader
	mu     sync.RWMutex
	byHash map[auth.Hash]auth.Key
}

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

// keyAt returns the cached key of hash hash, if it was found under header h.
func (c *readCache) keyAt(h walHeader, hash auth.Hash) (auth.Key, bool) {
	keys := c.keys.Load()
	if keys == nil || keys.header != h {
		return auth.Key{}, false
	}
	keys.mu.RLock()
	k, ok := keys.byHash[hash]
	keys.mu.RUnlock()
	return k, ok
}

// keepKey caches k, found by its hash by a query that started after h was read. The set
// holds the keys of one header: a key found under another header than the set's starts a
// new set, unless another request has just done so.
func (c *readCache) keepKey(h walHeader, k auth.Key) {
	keys := c.keys.Load()
	if keys == nil || keys.header != h {
		fresh := &cachedKeys{header: h, byHash: map[auth.Hash]auth.Key{}}
		if !c.keys.CompareAndSwap(keys, fresh) {
			return // another request replaced the set meanwhile: leave it be
		}
		keys = fresh
	}
	keys.mu.Lock()
	if len(keys.byHash) < maxCachedKeys {
		keys.byHash[k.Hash] = k
	}
	keys.mu.Unlock()
}

// forget drops everything cached. The header moves with this process's own commits as with
// any other's (they write the same wal-index), so this is not what makes them seen; it is
// called after each commit of the process all the same (DB.commit), so that what this
// process writes does not depend on the detector to be seen by its own requests.
func (c *readCache) forget() {
	c.version.Store(nil)
	c.keys.Store(nil)
}
