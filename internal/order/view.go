package order

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/btree"
)

// Mark is where a View stands in its store's history: every change its orders do not show has an event
// after Position, or moved Epoch (a change the log does not record, such as a DELETE in SQLite).
type Mark struct {
	Position string
	Epoch    uint64
}

// ErrReload refuses a Since whose Mark is of another epoch: Load again.
var ErrReload = errors.New("the orders changed in a way the log does not record")

// Store keeps the orders, safe for concurrent use, each change atomic across the processes sharing it.
type Store interface {
	Version(ctx context.Context) (uint64, error)             // changes with the orders; cheap: every request reads it
	Load(ctx context.Context, add func(Order)) (Mark, error) // every order to add, in id order; the Mark they reflect
	// Since returns the events after m, examining at most limit, the Mark after them, and
	// whether more may follow. ErrEventsExpired or ErrReload: Load again.
	Since(ctx context.Context, m Mark, limit int) (_ []Event, next Mark, more bool, err error)
	// Cancel returns the order after the cancel; changed is true for the one call that moved
	// it from pending. Refusals: ErrNotFound, ErrAlreadyShipped.
	Cancel(ctx context.Context, id int64) (o Order, changed bool, err error)
}

// View holds the orders of a Store in memory, kept current from its event log: each request
// reads the store's version, and is answered from a Snapshot at that version or later.
type View struct {
	store Store
	mu    sync.Mutex // one catch-up at a time; the requests that need it wait for it
	cur   atomic.Pointer[Snapshot]
}

// NewView returns the View of store; it loads the orders at its first Current.
func NewView(store Store) *View { return &View{store: store} }

// sinceLimit is how many events one Since examines; after loadAfter of them, a Load is cheaper.
const sinceLimit, loadAfter = 1000, 20 * 1000

// Current returns the orders at the store's version read now, or later.
func (v *View) Current(ctx context.Context) (*Snapshot, error) {
	ver, err := v.store.Version(ctx)
	if err != nil {
		return nil, err
	}
	if s := v.cur.Load(); s != nil && s.version == ver {
		return s, nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	s := v.cur.Load()
	if s != nil && s.version == ver {
		return s, nil // another request caught up meanwhile
	}
	err = ErrReload
	if s != nil {
		s = &Snapshot{Mark: s.Mark, byID: s.byID.Copy(), index: s.index.Copy()} // shares s's nodes until it writes them
		err = v.apply(ctx, s)
	}
	if errors.Is(err, ErrEventsExpired) || errors.Is(err, ErrReload) {
		s, err = v.load(ctx)
	}
	if err != nil {
		return nil, err
	}
	s.version = ver // read before the catch-up: the snapshot is at it or later
	v.cur.Store(s)
	return s, nil
}

// Cancel answers from the current snapshot for an order not pending (a state no change leaves), else asks the store.
func (v *View) Cancel(ctx context.Context, id int64) (Order, bool, error) {
	if s, err := v.Current(ctx); err == nil { // else the store may still reach the order (a damaged page elsewhere)
		o, ok := s.Get(id)
		if !ok {
			return Order{}, false, ErrNotFound
		}
		if o.Status != StatusPending {
			o, err := o.Cancel()
			return o, false, err
		}
	}
	return v.store.Cancel(ctx, id)
}

// apply applies the events after s's mark to s, which no reader has yet; ErrReload after loadAfter of them.
func (v *View) apply(ctx context.Context, s *Snapshot) error {
	for read := 0; read < loadAfter; read += sinceLimit {
		events, mark, more, err := v.store.Since(ctx, s.Mark, sinceLimit)
		if err != nil {
			return err
		}
		for _, e := range events {
			s.set(e.Order)
		}
		if s.Mark = mark; !more {
			return nil
		}
	}
	return ErrReload
}

// load reads every order, then what changed while it read; the trees are filled in order, cheaper than Sets.
func (v *View) load(ctx context.Context) (*Snapshot, error) {
	s := newSnapshot()
	var byStatus [len(states)][]indexKey
	var byPet []indexKey
	mark, err := v.store.Load(ctx, func(o Order) {
		r := rowOf(o)
		s.byID.Load(r) // in id order
		k := r.keys()
		byPet, byStatus[r.status] = append(byPet, k[0]), append(byStatus[r.status], k[1])
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(byPet, func(a, b indexKey) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.id, b.id)) })
	for _, keys := range append(byStatus[:], byPet) { // the states' keys are the least
		for _, k := range keys {
			s.index.Load(k)
		}
	}
	s.Mark = mark
	if err = v.apply(ctx, s); errors.Is(err, ErrReload) {
		err = fmt.Errorf("%w: the orders changed faster than they could be read", ErrUnavailable)
	}
	return s, err
}

// Snapshot is the orders at one version, immutable.
type Snapshot struct {
	Mark
	version uint64
	byID    *btree.BTreeG[row]
	index   *btree.BTreeG[indexKey] // (pet, id) and (statusKey, id)
}

// row is an order as a Snapshot keeps it: 40 bytes without pointers (an Order: 72, with two).
type row struct {
	id, pet, shipSec   int64
	shipNsec, quantity int32
	complete           bool
	status             uint8 // an index of states
}

var states = [...]Status{StatusPending, StatusShipped, StatusCancelled}

func rowOf(o Order) row {
	return row{id: o.ID, pet: o.PetID, shipSec: o.ShipDate.Unix(), shipNsec: int32(o.ShipDate.Nanosecond()),
		quantity: o.Quantity, complete: o.Complete, status: uint8(max(0, slices.Index(states[:], o.Status)))}
}

func (r row) order() Order {
	return Order{ID: r.id, PetID: r.pet, Quantity: r.quantity, ShipDate: time.Unix(r.shipSec, int64(r.shipNsec)).UTC(),
		Complete: r.complete, Status: states[r.status]}
}

// indexKey is an entry of the index: the key it sorts by, then the order's id.
type indexKey struct{ key, id int64 }

// statusKey is the key of a state in the index: below every pet's id.
func statusKey(status uint8) int64 { return math.MinInt64 + int64(status) }

// keys are r's entries in the index: its pet's, then its state's.
func (r row) keys() [2]indexKey { return [2]indexKey{{r.pet, r.id}, {statusKey(r.status), r.id}} }

func newSnapshot() *Snapshot {
	opts := btree.Options{NoLocks: true} // a Snapshot is never written once published
	return &Snapshot{byID: btree.NewBTreeGOptions(func(a, b row) bool { return a.id < b.id }, opts),
		index: btree.NewBTreeGOptions(func(a, b indexKey) bool { return a.key < b.key || a.key == b.key && a.id < b.id }, opts)}
}

// set puts o in a Snapshot not yet published, in place of the order with its id.
func (s *Snapshot) set(o Order) {
	r := rowOf(o)
	if prev, ok := s.byID.Set(r); ok {
		for _, k := range prev.keys() {
			s.index.Delete(k)
		}
	}
	for _, k := range r.keys() {
		s.index.Set(k)
	}
}

// Len is the number of orders.
func (s *Snapshot) Len() int { return s.byID.Len() }

// Get returns the order with the id.
func (s *Snapshot) Get(id int64) (Order, bool) {
	r, ok := s.byID.Get(row{id: id})
	return r.order(), ok
}

// All yields every order in id order.
func (s *Snapshot) All() iter.Seq[Order] {
	return func(yield func(Order) bool) {
		s.byID.Scan(func(r row) bool { return yield(r.order()) })
	}
}

// Find returns the orders after req.After that f keeps, in id order, reading the index that answers f best (the
// pet's, the states', or the ids) until the page is full, or req.Budget() entries: short, even empty, not the end.
func (s *Snapshot) Find(f Filter, req PageRequest) (Page, error) {
	for _, st := range f.Statuses {
		if !st.Valid() {
			return Page{}, fmt.Errorf("%w: status %q is not pending, shipped or cancelled", ErrBadRequest, st)
		}
	}
	if req.Size < 1 || req.Size > MaxPageSize {
		return Page{}, fmt.Errorf("%w: page size %d is not between 1 and %d", ErrBadRequest, req.Size, MaxPageSize)
	}
	after := int64(-1)
	if req.After != nil {
		after = *req.After
	}
	return find(s.entries(f, after), f, req), nil
}

// find is Find of the orders next yields.
func find(next func() (row, bool), f Filter, req PageRequest) Page {
	p := Page{Orders: []Order{}}
	if req.After != nil {
		p.Resume = *req.After
	}
	for examined := 0; ; examined++ {
		r, ok := next()
		switch {
		case !ok:
			p.End = true
			return p
		case examined == req.Budget():
			return p // an entry is left: not the end
		}
		p.Resume = r.id
		if o := r.order(); f.Matches(o) {
			if p.Orders = append(p.Orders, o); len(p.Orders) == req.Size {
				_, more := next()
				p.End = !more
				return p
			}
		}
	}
}

// entries returns the orders after the id after of the index that f reads, in id order.
func (s *Snapshot) entries(f Filter, after int64) func() (row, bool) {
	if f.PetID != nil {
		return s.keyed(*f.PetID, after)
	}
	if sts := slices.Compact(slices.Sorted(slices.Values(f.Statuses))); len(sts) > 0 && len(sts) < len(states) {
		next := s.keyed(statusKey(uint8(slices.Index(states[:], sts[0]))), after)
		for _, st := range sts[1:] {
			next = merge(next, s.keyed(statusKey(uint8(slices.Index(states[:], st))), after))
		}
		return next
	}
	it := s.byID.Iter()
	more := after < math.MaxInt64 && it.Seek(row{id: after + 1})
	return func() (row, bool) {
		r, ok := it.Item(), more
		more = more && it.Next()
		return r, ok
	}
}

// keyed returns the orders the index holds under key, after the id after.
func (s *Snapshot) keyed(key, after int64) func() (row, bool) {
	it := s.index.Iter()
	more := after < math.MaxInt64 && it.Seek(indexKey{key, after + 1})
	return func() (row, bool) {
		k := it.Item()
		if more = more && k.key == key; !more {
			return row{}, false
		}
		more = it.Next()
		r, _ := s.byID.Get(row{id: k.id})
		return r, true
	}
}

// merge yields the orders of a and b, each in id order and without an id in common, in id order.
func merge(a, b func() (row, bool)) func() (row, bool) {
	x, xok := a()
	y, yok := b()
	return func() (row, bool) {
		if !xok || yok && y.id < x.id { // the least is x's, from a
			a, b, x, xok, y, yok = b, a, y, yok, x, xok
		}
		r, ok := x, xok
		if ok {
			x, xok = a()
		}
		return r, ok
	}
}

// Filter selects the orders for which every field that is set holds.
type Filter struct {
	Statuses             []Status   // when not empty, the states kept
	PetID                *int64     // when set, the pet whose orders are kept
	ShipFrom, ShipBefore *time.Time // shipped at or after ShipFrom, strictly before ShipBefore
}

// Matches reports whether f selects o.
func (f Filter) Matches(o Order) bool {
	return (len(f.Statuses) == 0 || slices.Contains(f.Statuses, o.Status)) &&
		(f.PetID == nil || o.PetID == *f.PetID) &&
		(f.ShipFrom == nil || !o.ShipDate.Before(*f.ShipFrom)) &&
		(f.ShipBefore == nil || o.ShipDate.Before(*f.ShipBefore))
}

// Empty reports whether f can select no order: ShipFrom is at or after ShipBefore.
func (f Filter) Empty() bool {
	return f.ShipFrom != nil && f.ShipBefore != nil && !f.ShipFrom.Before(*f.ShipBefore)
}

// MaxPageSize bounds the memory of a page; ScanBudget, the fewest index entries one Find may
// examine, its work (a walk through a sparse filter still moves 1000 ids a call).
const MaxPageSize, ScanBudget = 1000, 1000

// ErrBadRequest is a Filter or PageRequest that no store can answer.
var ErrBadRequest = errors.New("bad find request")

// PageRequest is one page of a walk in ascending id order.
type PageRequest struct {
	After *int64 // when set, the page starts after this id (the previous page's Resume)
	Size  int    // the most orders the page holds: 1 to MaxPageSize
}

// Budget is how many index entries a Find for r may examine.
func (r PageRequest) Budget() int { return max(r.Size, ScanBudget) }

// Page is the answer of a Find: up to Size matching orders in id order.
type Page struct {
	Orders []Order
	Resume int64 // the last id examined (else the request's After): the next page's After
	End    bool  // every id after After was examined: there is no next page
}
