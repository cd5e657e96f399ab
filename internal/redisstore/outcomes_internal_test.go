package redisstore

import (
	"testing"

	"github.com/petstore/orderd/internal/order"
)

// TestOutcomeCacheIsBoundedPerVersion: a version keeps at most maxCachedOutcomes ids (one
// kept already may be kept again), and another version starts over.
func TestOutcomeCacheIsBoundedPerVersion(t *testing.T) {
	var s Orders
	v1 := version{generation: "one", counter: 7}
	notFound := cancelOutcome{err: order.ErrNotFound}
	for id := range int64(maxCachedOutcomes + 10) {
		keepAt(&s.outcomes, v1, id, &notFound, maxCachedOutcomes)
	}
	if n := len(s.outcomes.Load().byKey); n != maxCachedOutcomes {
		t.Fatalf("%d outcomes kept; want %d", n, maxCachedOutcomes)
	}
	if _, ok := s.outcomes.Load().at(v1, maxCachedOutcomes); ok {
		t.Fatal("an id past the bound was kept")
	}
	shipped := cancelOutcome{order: order.Order{ID: 1, Status: order.StatusShipped}, err: order.ErrAlreadyShipped}
	keepAt(&s.outcomes, v1, 1, &shipped, maxCachedOutcomes)
	if o, ok := s.outcomes.Load().at(v1, 1); !ok || o != shipped {
		t.Fatalf("an id kept already, kept again: %+v, %v", o, ok)
	}
	for _, other := range []version{{generation: "two", counter: 7}, {generation: "one", counter: 8}} {
		if _, ok := s.outcomes.Load().at(other, 1); ok {
			t.Fatalf("the outcome kept at %+v answered at %+v", v1, other)
		}
	}
	v2 := version{generation: "two", counter: 8}
	keepAt(&s.outcomes, v2, 5, &notFound, maxCachedOutcomes)
	if c := s.outcomes.Load(); c.version != v2 || len(c.byKey) != 1 {
		t.Fatalf("another version holds %d outcomes at %+v; want 1 at %+v", len(c.byKey), c.version, v2)
	}
}
