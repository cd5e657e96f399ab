package redisstore

import (
	"sync"

	"github.com/petstore/orderd/internal/order"
)

// outcomeCache is what cancels found at one version of the orders (see version.go): for each
// id, a state that no cancel changes (no such order, shipped, cancelled) and the order. A
// cancel within a request whose round trip read the orders' version answers from it when that
// version is the cache's, without a round trip of its own (Orders.Cancel).
//
// Why that is exact. cancel.lua returns the id's state together with the version Redis stands
// at, read in the same atomic step, and only that pair is kept. The version carried by the
// request was read in the limiter's round trip, which left after the request began. Every
// write of the orders sets a new counter and a new random generation in the same atomic step
// as its change, so one version is always one state of the data: if the two reads found the
// same version, whichever came first, Redis held the state kept when the carried read was
// made, during the request. (A Redis that lost writes comes back to an older state with that
// state's version, or without a generation, and then nothing is kept or answered.) A change
// the kept state does not foresee (an unknown id imported, a cancel through another
// instance) is a write, and moves the version. A pending order is never kept: its
// cancel must write, so it always runs cancel.lua. Without a carried version (a call outside
// a request, or one the limiter's fallback decided), every cancel runs cancel.lua.
//
// Half-written orders (no-data, no-status) are reported when cancel.lua meets them, not when
// the cache answers: about once per version rather than at every cancel, which is enough,
// since halfRecords logs each id once anyway.
type outcomeCache struct {
	version version
	mu      sync.RWMutex
	byID    map[int64]cancelOutcome
}

// cancelOutcome is the answer to a cancel that changes nothing: err is order.ErrNotFound,
// order.ErrAlreadyShipped with the shipped order, or nil with the order already cancelled.
type cancelOutcome struct {
	order order.Order
	err   error
}

// maxCachedOutcomes bounds what an outcomeCache keeps for one version, as sqlitestore bounds
// its cache per wal-index header: past it, ids are not added, and cost their cancel.lua.
const maxCachedOutcomes = 4096

// at returns the outcome kept for id when the cache is at version v.
func (c *outcomeCache) at(v version, id int64) (cancelOutcome, bool) {
	if c == nil || c.version != v {
		return cancelOutcome{}, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	o, ok := c.byID[id]
	return o, ok
}

// keepOutcome keeps the outcome that cancel.lua found for id at version v, or, when v is not
// the cache's version, starts a cache for v: what was kept for another version is dropped.
// A cancel.lua that replies after one which read a newer version may put the older version
// back: the newer version's cancels then run the script until one of them keeps it again, a
// round trip each and never a wrong answer. Keeping only the higher counter would not do: a
// Redis that lost its data counts again from below, and the cache would stay at a version
// that never comes back.
func (s *Orders) keepOutcome(v version, id int64, o cancelOutcome) {
	cur := s.outcomes.Load()
	if cur == nil || cur.version != v {
		s.outcomes.CompareAndSwap(cur, &outcomeCache{version: v, byID: map[int64]cancelOutcome{id: o}})
		return
	}
	cur.mu.Lock()
	if _, ok := cur.byID[id]; ok || len(cur.byID) < maxCachedOutcomes {
		cur.byID[id] = o
	}
	cur.mu.Unlock()
}
