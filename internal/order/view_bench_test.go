package order

import (
	"context"
	"testing"
	"time"
)

// BenchmarkFind: pages of 100 from a View of 100,000 orders, walked from the start, as
// uncached pages are read.
func BenchmarkFind(b *testing.B) {
	ship := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store := newMemStore()
	for i := range 100_000 {
		o := Order{ID: int64(i), PetID: int64(i % 1000), ShipDate: ship.Add(time.Duration(i) * time.Second), Status: states[i*7%10/6]}
		store.orders[o.ID] = o
	}
	s, err := NewView(store).Current(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	pet := int64(7)
	for name, f := range map[string]Filter{
		"all":        {},
		"pending":    {Statuses: []Status{StatusPending}},
		"two-states": {Statuses: []Status{StatusShipped, StatusCancelled}},
		"pet":        {PetID: &pet},
	} {
		b.Run(name, func(b *testing.B) {
			var after *int64
			for b.Loop() {
				p, err := s.Find(f, PageRequest{After: after, Size: 100})
				if err != nil {
					b.Fatal(err)
				}
				if after = &p.Resume; p.End {
					after = nil
				}
			}
		})
	}
}
