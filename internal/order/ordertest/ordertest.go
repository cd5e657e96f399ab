// Package ordertest is the conformance suite of order.Store: every implementation runs it,
// so that the embedded and the Redis stores behave the same.
package ordertest

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
)

// NewStore returns a store holding exactly orders, empty of anything else.
type NewStore func(tb testing.TB, orders []order.Order) order.Store

// Fixture is a set of orders with every state and the int64 edges.
func Fixture() []order.Order {
	ship := time.Date(2026, 11, 20, 8, 30, 0, 0, time.UTC)
	return []order.Order{
		{ID: 0, PetID: 0, Quantity: 0, ShipDate: ship, Complete: false, Status: order.StatusPending},
		{ID: 1, PetID: 10, Quantity: 2, ShipDate: ship, Complete: false, Status: order.StatusPending},
		{ID: 2, PetID: 20, Quantity: 1, ShipDate: ship.Add(time.Hour), Complete: true, Status: order.StatusShipped},
		{ID: 3, PetID: 30, Quantity: math.MaxInt32, ShipDate: ship, Complete: false, Status: order.StatusCancelled},
		{ID: math.MaxInt64 - 1, PetID: math.MaxInt64, Quantity: 5, ShipDate: ship, Complete: true, Status: order.StatusShipped},
		{ID: math.MaxInt64, PetID: math.MaxInt64 - 1, Quantity: 7, ShipDate: ship.Add(123456789 * time.Nanosecond), Complete: false, Status: order.StatusPending},
	}
}

// Run runs the suite against the stores newStore makes.
func Run(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	assertList := func(t *testing.T, s order.Store, want []order.Order) {
		t.Helper()
		list, err := Viewed(s).List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		assertOrders(t, list, want)
	}

	t.Run("ListReturnsEveryOrderSortedAndExact", func(t *testing.T) {
		assertList(t, newStore(t, reversed(Fixture())), Fixture())
	})

	t.Run("ListOfEmptyStore", func(t *testing.T) {
		assertList(t, newStore(t, nil), nil)
	})

	t.Run("StateTable", func(t *testing.T) {
		for _, tc := range []struct {
			name        string
			id          int64
			wantErr     error
			wantStatus  order.Status
			wantChanged bool
		}{
			{"PendingIsCancelled", 1, nil, order.StatusCancelled, true},
			{"MaxInt64PendingIsCancelled", math.MaxInt64, nil, order.StatusCancelled, true},
			{"CancelledStaysCancelled", 3, nil, order.StatusCancelled, false},
			{"ShippedIsRefused", 2, order.ErrAlreadyShipped, order.StatusShipped, false},
			{"MaxInt64MinusOneShippedIsRefused", math.MaxInt64 - 1, order.ErrAlreadyShipped, order.StatusShipped, false},
			{"UnknownIsNotFound", 4, order.ErrNotFound, "", false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s := newStore(t, Fixture())
				got, changed, err := s.Cancel(ctx, tc.id)
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Cancel(%d) error = %v, want %v", tc.id, err, tc.wantErr)
				}
				if changed != tc.wantChanged {
					t.Fatalf("Cancel(%d) changed = %v, want %v", tc.id, changed, tc.wantChanged)
				}
				if tc.wantErr == nil && (got.ID != tc.id || got.Status != tc.wantStatus) {
					t.Fatalf("Cancel(%d) = %+v, want status %s", tc.id, got, tc.wantStatus)
				}
				// Only the status of the one order may change, and only as the table says.
				want := Fixture()
				for i := range want {
					if want[i].ID == tc.id && tc.wantStatus != "" {
						want[i].Status = tc.wantStatus
					}
				}
				assertList(t, s, want)
			})
		}
	})

	t.Run("CancelReturnsTheWholeOrder", func(t *testing.T) {
		s := newStore(t, Fixture())
		for _, i := range []int{1, 2, 3, 5} { // pending, shipped, cancelled, max int64
			want := Fixture()[i]
			if want.Status == order.StatusPending {
				want.Status = order.StatusCancelled
			}
			got, _, _ := s.Cancel(ctx, want.ID)
			assertOrders(t, []order.Order{got}, []order.Order{want})
		}
	})

	t.Run("VersionMovesWithTransitionsOnly", func(t *testing.T) {
		s := newStore(t, Fixture())
		version := func() uint64 {
			t.Helper()
			v, err := s.Version(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		v0 := version()
		for _, id := range []int64{2, 3, 4} { // refused, unchanged, missing
			s.Cancel(ctx, id)
		}
		if version() != v0 {
			t.Fatal("the version moved without a change")
		}
		s.Cancel(ctx, 1)
		v1 := version()
		if v1 == v0 {
			t.Fatal("the version did not move with a cancel")
		}
		s.Cancel(ctx, 1)
		if version() != v1 {
			t.Fatal("the version moved on a cancel that changed nothing")
		}
	})

	t.Run("CancelTwiceIsIdempotent", func(t *testing.T) {
		s := newStore(t, Fixture())
		for i, wantChanged := range []bool{true, false, false} {
			o, changed, err := s.Cancel(ctx, 1)
			if err != nil || changed != wantChanged || o.Status != order.StatusCancelled {
				t.Fatalf("cancel #%d = %+v, %v, %v; want cancelled, changed=%v", i+1, o, changed, err, wantChanged)
			}
		}
	})

	t.Run("ConcurrentCancelsTransitionExactlyOnce", func(t *testing.T) {
		s := newStore(t, Fixture())
		const n = 100
		var wg sync.WaitGroup
		var mu sync.Mutex
		transitions, refusals := 0, 0
		for i := range n {
			wg.Go(func() {
				id := int64(1)
				if i%2 == 1 {
					id = 2 // shipped: must never change
				}
				_, changed, err := s.Cancel(ctx, id)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case id == 1 && err != nil:
					t.Errorf("cancel of pending order: %v", err)
				case id == 1 && changed:
					transitions++
				case id == 2 && errors.Is(err, order.ErrAlreadyShipped) && !changed:
					refusals++
				case id == 2:
					t.Errorf("cancel of shipped order: changed=%v err=%v", changed, err)
				}
			})
		}
		wg.Wait()
		if transitions != 1 || refusals != n/2 {
			t.Fatalf("transitions = %d, refusals = %d; want 1 and %d", transitions, refusals, n/2)
		}
		want := Fixture()
		want[1].Status = order.StatusCancelled
		assertList(t, s, want)
	})
}

func assertOrders(tb testing.TB, got, want []order.Order) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Fatalf("got %d orders, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ID != w.ID || g.PetID != w.PetID || g.Quantity != w.Quantity || !g.ShipDate.Equal(w.ShipDate) ||
			g.Complete != w.Complete || g.Status != w.Status {
			tb.Errorf("order #%d = %+v, want %+v", i, g, w)
		}
	}
}

func reversed(orders []order.Order) []order.Order {
	out := slices.Clone(orders)
	slices.Reverse(out)
	return out
}

// Record is the JSON object of base (field name to JSON value) with the fields of change set;
// an empty value removes the field. Tests make bad data-file records with it.
func Record(tb testing.TB, base, change map[string]string) []byte {
	tb.Helper()
	fields := map[string]json.RawMessage{}
	for _, m := range []map[string]string{base, change} {
		for k, v := range m {
			if v == "" {
				delete(fields, k)
			} else {
				fields[k] = json.RawMessage(v)
			}
		}
	}
	data, err := json.Marshal(fields)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
