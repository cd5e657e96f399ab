package ordertest

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
)

// NewFinderStore returns a store holding exactly orders, empty of anything else.
type NewFinderStore func(tb testing.TB, orders []order.Order) order.Store

// Many returns n orders with ids from 0 up, in gaps, and the int64 edges; states, pets and
// ship dates cycle with different periods, so that every combination of filters keeps some.
func Many(n int) []order.Order {
	ship := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	states := []order.Status{order.StatusPending, order.StatusShipped, order.StatusCancelled, order.StatusPending}
	out := make([]order.Order, 0, n)
	for i := range n {
		id := int64(i) * 3
		switch i {
		case n - 2:
			id = math.MaxInt64 - 1
		case n - 1:
			id = math.MaxInt64
		}
		out = append(out, order.Order{
			ID: id, PetID: int64(i % 5), Quantity: int32(i),
			ShipDate: ship.Add(time.Duration(i%7) * 24 * time.Hour),
			Complete: i%2 == 0, Status: states[i%len(states)],
		})
	}
	return out
}

// Model is what a walk through every page of f must return: the matches in id order.
func Model(orders []order.Order, f order.Filter) []order.Order {
	out := slices.DeleteFunc(slices.Clone(orders), func(o order.Order) bool { return !f.Matches(o) })
	slices.SortFunc(out, func(a, b order.Order) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// walk reads every page of f with pages of size, checks each page's shape, and returns the
// orders in the order read. each, when set, is also given every page and its request.
func walk(tb testing.TB, s finder, f order.Filter, size int, each func(order.PageRequest, order.Page)) []order.Order {
	tb.Helper()
	var got []order.Order
	req := order.PageRequest{Size: size}
	for calls := 0; ; calls++ {
		if calls > 100000 {
			tb.Fatal("the walk does not end")
		}
		p, err := s.Find(context.Background(), f, req)
		if err != nil {
			tb.Fatalf("Find(%+v, after %v): %v", f, req.After, err)
		}
		if len(p.Orders) > size {
			tb.Fatalf("a page of size %d holds %d orders", size, len(p.Orders))
		}
		for _, o := range p.Orders {
			if req.After != nil && o.ID <= *req.After || o.ID > p.Resume {
				tb.Fatalf("page after %v resuming at %d holds order %d", req.After, p.Resume, o.ID)
			}
		}
		if each != nil {
			each(req, p)
		}
		got = append(got, p.Orders...)
		if p.End {
			return got
		}
		if req.After != nil && p.Resume <= *req.After {
			tb.Fatalf("the walk does not move: after %d, resume %d", *req.After, p.Resume)
		}
		req.After = new(p.Resume)
	}
}

// RunFind runs the suite of order.Finder against the stores newStore makes.
func RunFind(t *testing.T, newStore NewFinderStore) {
	ctx := context.Background()
	many := Many(300)
	at := func(day int) *time.Time {
		return new(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(day) * 24 * time.Hour))
	}

	t.Run("EveryFilterAgainstTheModel", func(t *testing.T) {
		s := newStore(t, many)
		statusSets := [][]order.Status{nil, {order.StatusPending}, {order.StatusShipped}, {order.StatusCancelled},
			{order.StatusPending, order.StatusCancelled}, {order.StatusShipped, order.StatusPending},
			{order.StatusCancelled, order.StatusShipped, order.StatusPending}, {order.StatusShipped, order.StatusShipped}}
		for _, statuses := range statusSets {
			for _, petID := range []*int64{nil, new(int64(2)), new(int64(99))} {
				for _, ship := range [][2]*time.Time{{nil, nil}, {at(3), nil}, {nil, at(3)}, {at(2), at(5)}, {at(4), at(4)}} {
					f := order.Filter{Statuses: statuses, PetID: petID, ShipFrom: ship[0], ShipBefore: ship[1]}
					assertOrders(t, walk(t, Viewed(s), f, 1000, nil), Model(many, f))
				}
			}
		}
	})

	t.Run("PageWalksOfEverySizeGiveTheModel", func(t *testing.T) {
		s := newStore(t, many)
		for _, f := range []order.Filter{{}, {Statuses: []order.Status{order.StatusShipped, order.StatusCancelled}}, {PetID: new(int64(1))}, {ShipFrom: at(6)}} {
			want := Model(many, f)
			for _, size := range []int{1, 2, 7, 1000} {
				assertOrders(t, walk(t, Viewed(s), f, size, nil), want)
			}
		}
	})

	t.Run("Int64EdgesInOrder", func(t *testing.T) {
		s := newStore(t, reversed(Fixture()))
		assertOrders(t, walk(t, Viewed(s), order.Filter{}, 1, nil), Fixture())
		p, err := Viewed(s).Find(ctx, order.Filter{}, order.PageRequest{After: new(int64(math.MaxInt64 - 1)), Size: 10})
		if err != nil || len(p.Orders) != 1 || p.Orders[0].ID != math.MaxInt64 || !p.End {
			t.Fatalf("after MaxInt64-1: %+v, %v", p, err)
		}
		p, err = Viewed(s).Find(ctx, order.Filter{}, order.PageRequest{After: new(int64(math.MaxInt64)), Size: 10})
		if err != nil || len(p.Orders) != 0 || !p.End || p.Resume != math.MaxInt64 {
			t.Fatalf("after MaxInt64: %+v, %v", p, err)
		}
	})

	t.Run("WalkWhileCancellingNeverRepeatsNorSkips", func(t *testing.T) {
		for _, f := range []order.Filter{{}, {Statuses: []order.Status{order.StatusPending, order.StatusCancelled}}} {
			s := newStore(t, many)
			var pending []int64
			for _, o := range many {
				if o.Status == order.StatusPending {
					pending = append(pending, o.ID)
				}
			}
			// Cancel from the top and the bottom of the ids while the walk goes up, so
			// that orders move between the states' ranges ahead of and behind it.
			var wg sync.WaitGroup
			wg.Go(func() {
				for i := range pending {
					id := pending[len(pending)-1-i/2]
					if i%2 == 0 {
						id = pending[i/2]
					}
					if _, _, err := s.Cancel(ctx, id); err != nil {
						t.Errorf("cancel %d: %v", id, err)
						return
					}
				}
			})
			got := walk(t, Viewed(s), f, 7, nil)
			wg.Wait()
			want := Model(many, order.Filter{Statuses: f.Statuses}) // every order of these states stays in them
			if len(got) != len(want) {
				t.Fatalf("filter %+v: walked %d orders, want %d", f, len(got), len(want))
			}
			for i := range want {
				if got[i].ID != want[i].ID {
					t.Fatalf("filter %+v: order #%d is %d, want %d", f, i, got[i].ID, want[i].ID)
				}
			}
		}
	})

	t.Run("SparseFilterPagesAreBounded", func(t *testing.T) {
		const n = 2500
		orders := Many(n)
		lonely := time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC)
		for _, i := range []int{1234, 2001} {
			orders[i].ShipDate = lonely
		}
		s := newStore(t, orders)
		ids := make([]int64, len(orders))
		for i, o := range orders {
			ids[i] = o.ID
		}
		slices.Sort(ids)
		rank := func(id int64) int { // how many ids are <= id
			return sort.Search(len(ids), func(i int) bool { return ids[i] > id })
		}
		before := lonely.Add(time.Nanosecond)
		f := order.Filter{ShipFrom: &lonely, ShipBefore: &before}
		budget := order.PageRequest{Size: 10}.Budget()
		calls, empty := 0, 0
		got := walk(t, Viewed(s), f, 10, func(req order.PageRequest, p order.Page) {
			calls++
			from := 0
			if req.After != nil {
				from = rank(*req.After)
			}
			if moved := rank(p.Resume) - from; moved > budget {
				t.Fatalf("one call examined %d ids, over the budget %d", moved, budget)
			}
			if len(p.Orders) == 0 && !p.End {
				empty++
			}
		})
		assertOrders(t, got, Model(orders, f))
		if minCalls := (n + budget - 1) / budget; calls < minCalls || empty == 0 {
			t.Fatalf("%d calls, %d empty pages before the end; want at least %d calls and an empty page", calls, empty, minCalls)
		}
	})

	t.Run("Get", func(t *testing.T) {
		s := newStore(t, Fixture())
		for _, want := range Fixture() {
			got, err := Viewed(s).Get(ctx, want.ID)
			if err != nil {
				t.Fatalf("Get(%d): %v", want.ID, err)
			}
			assertOrders(t, []order.Order{got}, []order.Order{want})
		}
		if _, err := Viewed(s).Get(ctx, 4); !errors.Is(err, order.ErrNotFound) {
			t.Fatalf("Get(4) = %v, want ErrNotFound", err)
		}
		if _, _, err := s.Cancel(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if got, err := Viewed(s).Get(ctx, 1); err != nil || got.Status != order.StatusCancelled {
			t.Fatalf("Get after cancel = %+v, %v", got, err)
		}
	})

	t.Run("BadRequestsAreRefused", func(t *testing.T) {
		s := newStore(t, Fixture())
		for _, tc := range []struct {
			f   order.Filter
			req order.PageRequest
		}{
			{order.Filter{}, order.PageRequest{Size: 0}},
			{order.Filter{}, order.PageRequest{Size: order.MaxPageSize + 1}},
			{order.Filter{Statuses: []order.Status{"lost"}}, order.PageRequest{Size: 1}},
		} {
			if _, err := Viewed(s).Find(ctx, tc.f, tc.req); !errors.Is(err, order.ErrBadRequest) {
				t.Errorf("Find(%+v, %+v) = %v, want ErrBadRequest", tc.f, tc.req, err)
			}
		}
	})
}

// FindAll is every order of f, read a page at a time through s's View.
func FindAll(tb testing.TB, s order.Store, f order.Filter) []order.Order {
	tb.Helper()
	return walk(tb, Viewed(s), f, 100, nil)
}

// finder reads pages.
type finder interface {
	Find(ctx context.Context, f order.Filter, req order.PageRequest) (order.Page, error)
}

// Imported is the orders of a store that held before once list is imported: an order already
// there takes list's data but keeps its status; a new one is as list has it. In id order.
func Imported(before, list []order.Order) []order.Order {
	byID := map[int64]order.Order{}
	for _, o := range before {
		byID[o.ID] = o
	}
	for _, o := range list {
		if old, ok := byID[o.ID]; ok {
			o.Status = old.Status
		}
		byID[o.ID] = o
	}
	out := make([]order.Order, 0, len(byID))
	for _, o := range byID {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b order.Order) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// AssertImported fails tb unless s lists want, and finds by each state exactly want's orders
// of that state: the indexes an import keeps agree with the orders.
func AssertImported(tb testing.TB, s order.Store, want []order.Order) {
	tb.Helper()
	got, err := Fresh(s).List(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	same := func(what string, got, want []order.Order) {
		tb.Helper()
		if len(got) != len(want) { // before assertOrders, which prints them all
			tb.Fatalf("%s: %d orders, want %d", what, len(got), len(want))
		}
		assertOrders(tb, got, want)
	}
	same("List", got, want)
	for _, st := range []order.Status{order.StatusPending, order.StatusShipped, order.StatusCancelled} {
		f := order.Filter{Statuses: []order.Status{st}}
		same("Find "+string(st), walk(tb, Fresh(s), f, 100, nil), Model(want, f))
	}
}

// Reimport is first changed as a second import of it sends it: every third order's quantity
// changed (changed counts them), every status given as shipped (which an import ignores for
// an order that exists), and 3000 new pending orders with ids first does not hold.
func Reimport(first []order.Order) (second []order.Order, changed int) {
	second = slices.Clone(first)
	for i := range second {
		if i%3 == 0 {
			second[i].Quantity++
			changed++
		}
		second[i].Status = order.StatusShipped
	}
	for i := range 3000 {
		second = append(second, order.Order{ID: int64(i)*3 + 1, ShipDate: first[0].ShipDate, Status: order.StatusPending})
	}
	return second, changed
}
