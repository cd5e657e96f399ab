// Package inmem keeps what the service needs in the process's memory: orders and pets (the
// embedded mode's stores), and a ratelimit.Limiter, exact for one instance and the fallback
// of the Redis limiter when Redis cannot be reached.
package inmem

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/petstore/orderd/internal/order"
)

var _ order.Store = (*Orders)(nil)

// Orders is an order.Store in memory. A mutex makes each transition atomic.
type Orders struct {
	mu      sync.RWMutex
	byID    map[int64]int // index into sorted
	sorted  []order.Order // by id, so List needs no sort
	version atomic.Uint64 // moved under mu, read without it
}

// NewOrders returns a store holding orders, which must have distinct, valid ids.
func NewOrders(orders []order.Order) (*Orders, error) {
	if err := order.ValidateAll(orders); err != nil {
		return nil, err
	}
	s := &Orders{byID: make(map[int64]int, len(orders)), sorted: slices.Clone(orders)}
	slices.SortFunc(s.sorted, func(a, b order.Order) int { return cmp.Compare(a.ID, b.ID) })
	for i, o := range s.sorted {
		s.byID[o.ID] = i
	}
	return s, nil
}

// List returns a copy of every order, sorted by id.
func (s *Orders) List(context.Context) ([]order.Order, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.sorted), nil
}

// Cancel applies order.Order.Cancel under the lock.
func (s *Orders) Cancel(_ context.Context, id int64) (order.Order, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.byID[id]
	if !ok {
		return order.Order{}, false, order.ErrNotFound
	}
	before := s.sorted[i]
	after, err := before.Cancel()
	if err != nil {
		return before, false, err
	}
	s.sorted[i] = after
	changed := before.Status != after.Status
	if changed {
		s.version.Add(1)
	}
	return after, changed, nil
}

// Version counts the transitions made.
func (s *Orders) Version(context.Context) (uint64, error) {
	return s.version.Load(), nil
}
