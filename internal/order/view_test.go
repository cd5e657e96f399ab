package order

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// snapshotOf is a Snapshot of orders, as a View's load makes it.
func snapshotOf(orders ...Order) *Snapshot {
	s := newSnapshot()
	for _, o := range orders {
		s.set(o)
	}
	return s
}

func ids(orders []Order) []int64 {
	var out []int64
	for _, o := range orders {
		out = append(out, o.ID)
	}
	return out
}

// TestFindPages: a page stops at its Size-th match, ends only when no entry is left after it
// (or the budget was not reached), and resumes after the last entry examined.
func TestFindPages(t *testing.T) {
	ship := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	orders := func(n, shippedEvery int) *Snapshot {
		s := newSnapshot()
		for i := range n {
			st := StatusPending
			if shippedEvery > 0 && i%shippedEvery == 0 {
				st = StatusShipped
			}
			s.set(Order{ID: int64(10 + i), Status: st, ShipDate: ship})
		}
		return s
	}
	shipped := Filter{Statuses: []Status{StatusShipped}}
	later := ship.Add(time.Hour)
	none := Filter{ShipFrom: &later} // no index answers it: every entry is examined
	after := int64(9)
	for _, tc := range []struct {
		name   string
		s      *Snapshot
		f      Filter
		req    PageRequest
		want   []int64
		resume int64
		end    bool
	}{
		{"FullPageStopsAtTheSizethMatch", orders(10, 3), shipped, PageRequest{Size: 2}, []int64{10, 13}, 13, false},
		{"FullPageOnTheLastEntryEnds", orders(10, 3), shipped, PageRequest{Size: 4}, []int64{10, 13, 16, 19}, 19, true},
		{"ShortPageEnds", orders(10, 3), shipped, PageRequest{Size: 5}, []int64{10, 13, 16, 19}, 19, true},
		{"NothingReadEndsWhereItStarted", orders(0, 0), Filter{}, PageRequest{After: &after, Size: 5}, nil, 9, true},
		{"OverTheBudgetIsNotTheEnd", orders(ScanBudget+1, 0), none, PageRequest{Size: 5}, nil, int64(10 + ScanBudget - 1), false},
		{"TheBudgetExactlyIsTheEnd", orders(ScanBudget, 0), none, PageRequest{Size: 5}, nil, int64(10 + ScanBudget - 1), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.s.Find(tc.f, tc.req)
			if err != nil || !slices.Equal(ids(p.Orders), tc.want) || p.Resume != tc.resume || p.End != tc.end {
				t.Fatalf("Find = %v resume %d end %v, %v; want %v resume %d end %v", ids(p.Orders), p.Resume, p.End, err, tc.want, tc.resume, tc.end)
			}
		})
	}
}

// TestAFindReadsWhatItReturns: a filter an index answers exactly (none, one or two states, a
// pet, a pet and a state) reads the page and one entry more; one it does not (ship dates)
// reads on until the page is full or the budget is spent.
func TestAFindReadsWhatItReturns(t *testing.T) {
	ship := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var all []Order
	for i := range 20000 {
		all = append(all, Order{ID: int64(i), PetID: int64(i % 97), ShipDate: ship.Add(time.Duration(i) * time.Minute),
			Status: states[(i/7)%3]})
	}
	s := snapshotOf(all...)
	pet := int64(5)
	from := ship.Add(19000 * time.Minute) // the last 1000 orders
	for _, tc := range []struct {
		name     string
		f        Filter
		size     int
		wantRead int
	}{
		{"NoFilter", Filter{}, 100, 101},
		{"OneState", Filter{Statuses: []Status{StatusShipped}}, 100, 101},
		{"TwoStates", Filter{Statuses: []Status{StatusShipped, StatusCancelled}}, 100, 101},
		{"APet", Filter{PetID: &pet}, 10, 11},
		{"APetAndAState", Filter{PetID: &pet, Statuses: []Status{StatusPending}}, 10, 31}, // a third of the pet's
		{"ShipDatesPastTheBudget", Filter{ShipFrom: &from}, 10, ScanBudget + 1},
		{"ShipDatesAPageOfMatches", Filter{ShipFrom: &ship}, 10, 11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := 0
			next := s.entries(tc.f, -1)
			counted := func() (row, bool) {
				r, ok := next()
				if ok {
					read++
				}
				return r, ok
			}
			p := find(counted, tc.f, PageRequest{Size: tc.size})
			if got := len(p.Orders); read > tc.wantRead+2 || read < tc.wantRead-2 || (tc.wantRead <= tc.size+1 && got != tc.size) {
				t.Fatalf("read %d entries for %d orders; want about %d", read, got, tc.wantRead)
			}
			for _, o := range p.Orders {
				if !tc.f.Matches(o) {
					t.Fatalf("order %+v does not match", o)
				}
			}
		})
	}
}

// memStore is a Store in memory, with a log, for the View's tests.
type memStore struct {
	mu      sync.Mutex
	orders  map[int64]Order
	log     []Event
	dropped int // events before it are gone: a Since before them is expired
	epoch   uint64
	loads   int
	cancels int
}

func newMemStore(orders ...Order) *memStore {
	m := &memStore{orders: map[int64]Order{}}
	for _, o := range orders {
		m.orders[o.ID] = o
	}
	return m
}

func (m *memStore) Version(context.Context) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return uint64(len(m.log)) + m.epoch<<32, nil
}

func (m *memStore) Load(_ context.Context, add func(Order)) (Mark, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.loads++
	var sorted []Order
	for _, o := range m.orders {
		sorted = append(sorted, o)
	}
	slices.SortFunc(sorted, func(a, b Order) int { return int(a.ID - b.ID) })
	for _, o := range sorted {
		add(o)
	}
	return Mark{Position: strconv.Itoa(len(m.log)), Epoch: m.epoch}, nil
}

func (m *memStore) Since(_ context.Context, mk Mark, limit int) ([]Event, Mark, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if mk.Epoch != m.epoch {
		return nil, mk, false, ErrReload
	}
	at, _ := strconv.Atoi(mk.Position)
	if at < m.dropped {
		return nil, mk, false, ErrEventsExpired
	}
	end := min(len(m.log), at+limit)
	mk.Position = strconv.Itoa(end)
	return slices.Clone(m.log[at:end]), mk, end < len(m.log), nil
}

func (m *memStore) Cancel(_ context.Context, id int64) (Order, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cancels++
	o, ok := m.orders[id]
	if !ok {
		return Order{}, false, ErrNotFound
	}
	after, err := o.Cancel()
	if err != nil || after.Status == o.Status {
		return after, false, err
	}
	m.put(after, EventCancelled)
	return after, true, nil
}

func (m *memStore) put(o Order, t EventType) {
	m.orders[o.ID] = o
	m.log = append(m.log, Event{ID: strconv.Itoa(len(m.log) + 1), Type: t, Order: o})
}

// TestViewFollowsTheStore: a View answers each read at the store's version or later: it
// follows the log after a change, loads again when the log cannot tell (expired, a new
// epoch), and a snapshot once given never changes.
func TestViewFollowsTheStore(t *testing.T) {
	ctx := context.Background()
	ship := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	store := newMemStore(Order{ID: 1, ShipDate: ship, Status: StatusPending}, Order{ID: 2, ShipDate: ship, Status: StatusShipped})
	v := NewView(store)
	current := func() *Snapshot {
		t.Helper()
		s, err := v.Current(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	first := current()
	if first.Len() != 2 || store.loads != 1 || current() != first {
		t.Fatalf("first reads: %d orders, %d loads; want 2 orders, one load, the same snapshot again", first.Len(), store.loads)
	}
	// A change: the next read follows the log, and the old snapshot keeps what it had.
	store.mu.Lock()
	store.put(Order{ID: 3, PetID: 9, ShipDate: ship, Status: StatusPending}, EventCreated)
	store.mu.Unlock()
	if _, _, err := v.Cancel(ctx, 1); err != nil {
		t.Fatal(err)
	}
	s := current()
	if o, _ := s.Get(1); o.Status != StatusCancelled || s.Len() != 3 || store.loads != 1 {
		t.Fatalf("after two changes: order 1 %s, %d orders, %d loads", o.Status, s.Len(), store.loads)
	}
	if o, _ := first.Get(1); o.Status != StatusPending || first.Len() != 2 {
		t.Fatal("a snapshot given out changed")
	}
	if p, _ := s.Find(Filter{PetID: new(int64(9))}, PageRequest{Size: 10}); !slices.Equal(ids(p.Orders), []int64{3}) {
		t.Fatalf("the pet's page: %v; want order 3 from the log", ids(p.Orders))
	}
	// Cancels the snapshot answers (missing, shipped, cancelled) never reach the store.
	for _, id := range []int64{1, 2, 4} {
		v.Cancel(ctx, id)
	}
	if store.cancels != 1 {
		t.Fatalf("%d cancels reached the store; want only the pending order's", store.cancels)
	}
	// The log expired past the view, then another epoch: each time a load.
	for i, change := range []func(){
		func() {
			store.put(Order{ID: 4, ShipDate: ship, Status: StatusPending}, EventCreated)
			store.dropped = len(store.log)
		},
		func() { delete(store.orders, 4); store.epoch++ },
	} {
		store.mu.Lock()
		change()
		store.mu.Unlock()
		s := current()
		if _, has4 := s.Get(4); store.loads != 2+i || has4 != (i == 0) {
			t.Fatalf("change %d: %d loads, order 4 held %v", i, store.loads, has4)
		}
	}
}

// TestViewLoadsWhenFarBehind: a View that would read more of the log than a load costs loads.
func TestViewLoadsWhenFarBehind(t *testing.T) {
	ctx := context.Background()
	store := newMemStore()
	v := NewView(store)
	if _, err := v.Current(ctx); err != nil {
		t.Fatal(err)
	}
	store.mu.Lock()
	for i := range loadAfter + 1 {
		store.put(Order{ID: int64(i), ShipDate: time.Unix(0, 0), Status: StatusPending}, EventCreated)
	}
	store.mu.Unlock()
	s, err := v.Current(ctx)
	if err != nil || s.Len() != loadAfter+1 || store.loads != 2 {
		t.Fatalf("%d orders, %d loads, %v; want all, by a second load", s.Len(), store.loads, err)
	}
}

// failingStore fails every call but Version with err.
type failingStore struct {
	*memStore
	err error
}

func (f *failingStore) Load(context.Context, func(Order)) (Mark, error) { return Mark{}, f.err }

func TestViewPassesOnTheStoresErrors(t *testing.T) {
	want := errors.New("store down")
	v := NewView(&failingStore{memStore: newMemStore(), err: want})
	if _, err := v.Current(context.Background()); !errors.Is(err, want) {
		t.Fatalf("Current = %v, want %v", err, want)
	}
}
