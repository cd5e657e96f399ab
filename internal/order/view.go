package order

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/btree"
)

// Mark is where a View stands in its store's history.
type Mark struct {
	// Position is the log's position the orders reflect: every change they do not show has
	// an event after it.
	Position string
	// Epoch moves with a change the log does not record (in SQLite a DELETE, which no
	// writer of orders makes): a View that sees it move loads the orders again.
	Epoch uint64
}

// ErrReload refuses a Since whose Mark is of another epoch: Load again.
var ErrReload = errors.New("the orders changed in a way the log does not record")

// Store keeps the orders. Implementations are safe for concurrent use and make every
// transition atomic, across every process that shares the same storage. A View reads them.
type Store interface {
	// Version changes whenever the orders do. Cheap: every request reads it.
	Version(ctx context.Context) (uint64, error)
	// Load calls add with every order, in id order and once each, and returns the Mark they
	// reflect. It may read while others write, so long as every change it may have missed has
	// an event after the Mark's position.
	Load(ctx context.Context, add func(Order)) (Mark, error)
	// Since returns the events after m, examining at most limit, the Mark after them, and
	// whether more may follow. ErrEventsExpired or ErrReload: Load again.
	Since(ctx context.Context, m Mark, limit int) (_ []Event, next Mark, more bool, err error)
	// Cancel cancels the order and returns it as it is afterwards; changed is true for the
	// one call that moved it from pending. Refusals: ErrNotFound, ErrAlreadyShipped.
	Cancel(ctx context.Context, id int64) (o Order, changed bool, err error)
}

// View holds the orders of a Store in memory, kept current from the store's event log, so
// that the list, every page and every order are read without asking the store for them. Each
// request reads the store's version first (Store.Version), and is answered from a Snapshot at
// that version or a later one: never an older one.
type View struct {
	store Store
	mu    sync.Mutex // one catch-up at a time; the requests that need it wait for it
	cur   atomic.Pointer[Snapshot]
}

// NewView returns the View of store; it loads the orders at its first Current.
func NewView(store Store) *View { return &View{store: store} }

// sinceLimit is how many events one Since examines; after loadAfter of them in one
// catch-up, Load is cheaper than reading on (an import of many orders).
const (
	sinceLimit = 1000
	loadAfter  = 20 * sinceLimit
)

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
	next, err := v.catchUp(ctx, s)
	if errors.Is(err, ErrEventsExpired) || errors.Is(err, ErrReload) {
		next, err = v.load(ctx)
	}
	if err != nil {
		return nil, err
	}
	next.version = ver // read before the catch-up: the snapshot is at it or later
	v.cur.Store(next)
	return next, nil
}

// Cancel answers from the snapshot at the current version when the order is not pending (a
// state no later change leaves, so the answer stands), and asks the store otherwise.
func (v *View) Cancel(ctx context.Context, id int64) (Order, bool, error) {
	s, err := v.Current(ctx)
	if err != nil {
		return v.store.Cancel(ctx, id) // the store may still reach the order (a damaged page elsewhere)
	}
	o, ok := s.Get(id)
	if !ok {
		return Order{}, false, ErrNotFound
	}
	if o.Status != StatusPending {
		o, err := o.Cancel()
		return o, false, err
	}
	return v.store.Cancel(ctx, id)
}

// catchUp applies the events after s's mark to a copy of s; ErrEventsExpired or ErrReload
// when it cannot.
func (v *View) catchUp(ctx context.Context, s *Snapshot) (*Snapshot, error) {
	if s == nil {
		return nil, ErrReload
	}
	next := s.copy()
	return next, v.apply(ctx, next)
}

// apply applies the events after s's mark to s, which no reader has yet; ErrReload after
// loadAfter of them, when a load is cheaper than reading on (an import of many orders).
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

// load reads every order, then what changed while it read.
func (v *View) load(ctx context.Context) (*Snapshot, error) {
	s := newSnapshot()
	var byStatus [len(states)][]int64
	var byPet []indexKey
	mark, err := v.store.Load(ctx, func(o Order) {
		r := rowOf(o)
		s.byID.Load(r) // in id order: appended
		byStatus[r.status] = append(byStatus[r.status], r.id)
		byPet = append(byPet, indexKey{r.pet, r.id})
	})
	if err != nil {
		return nil, err
	}
	for st, ids := range byStatus { // each in id order already
		for _, id := range ids {
			s.byStatus.Load(indexKey{int64(st), id})
		}
	}
	slices.SortFunc(byPet, func(a, b indexKey) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.id, b.id)) })
	for _, k := range byPet {
		s.byPet.Load(k)
	}
	s.Mark = mark
	if err := v.apply(ctx, s); errors.Is(err, ErrReload) {
		return nil, fmt.Errorf("%w: the orders changed faster than they could be read", ErrUnavailable)
	} else if err != nil {
		return nil, err
	}
	return s, nil
}

// Snapshot is the orders at one version, immutable: every reader of it sees the same orders.
type Snapshot struct {
	Mark
	version  uint64
	byID     *btree.BTreeG[row]
	byStatus *btree.BTreeG[indexKey] // (status, id)
	byPet    *btree.BTreeG[indexKey] // (pet, id)
}

// row is an order as a Snapshot keeps it, in 40 bytes where an Order takes 72.
type row struct {
	id, pet, shipSec   int64
	shipNsec, quantity int32
	complete           bool
	status             uint8 // an index of states
}

var states = [...]Status{StatusPending, StatusShipped, StatusCancelled}

func rowOf(o Order) row {
	r := row{id: o.ID, pet: o.PetID, shipSec: o.ShipDate.Unix(), shipNsec: int32(o.ShipDate.Nanosecond()),
		quantity: o.Quantity, complete: o.Complete}
	for i, s := range states {
		if s == o.Status {
			r.status = uint8(i)
		}
	}
	return r
}

func (r row) order() Order {
	return Order{ID: r.id, PetID: r.pet, Quantity: r.quantity, ShipDate: time.Unix(r.shipSec, int64(r.shipNsec)).UTC(),
		Complete: r.complete, Status: states[r.status]}
}

// indexKey is an entry of an index: the key it sorts by, then the order's id.
type indexKey struct{ key, id int64 }

func byKeyThenID(a, b indexKey) bool { return a.key < b.key || a.key == b.key && a.id < b.id }

var treeOptions = btree.Options{NoLocks: true} // a Snapshot is never written once published

func newSnapshot() *Snapshot {
	return &Snapshot{
		byID:     btree.NewBTreeGOptions(func(a, b row) bool { return a.id < b.id }, treeOptions),
		byStatus: btree.NewBTreeGOptions(byKeyThenID, treeOptions),
		byPet:    btree.NewBTreeGOptions(byKeyThenID, treeOptions),
	}
}

// copy returns a copy that shares s's trees until it writes them.
func (s *Snapshot) copy() *Snapshot {
	return &Snapshot{Mark: s.Mark, byID: s.byID.Copy(), byStatus: s.byStatus.Copy(), byPet: s.byPet.Copy()}
}

// set puts o in a Snapshot not yet published, in place of the order with its id.
func (s *Snapshot) set(o Order) {
	r := rowOf(o)
	if prev, ok := s.byID.Set(r); ok {
		s.byStatus.Delete(indexKey{int64(prev.status), prev.id})
		s.byPet.Delete(indexKey{prev.pet, prev.id})
	}
	s.byStatus.Set(indexKey{int64(r.status), r.id})
	s.byPet.Set(indexKey{r.pet, r.id})
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

// Find returns the orders after req.After that f keeps, in id order. It reads the index that
// answers f best (the pet's, the states', or the ids), an entry at a time, and stops when the
// page is full, or after req.Budget() entries: a filter an index answers exactly reads the
// page and one entry more; one it does not (ship dates, a pet and states) reads on in the
// index, up to the budget, so a page may come back short, even empty, and still not be the end.
func (s *Snapshot) Find(f Filter, req PageRequest) (Page, error) {
	if err := CheckFind(f, req); err != nil {
		return Page{}, err
	}
	after := int64(-1)
	if req.After != nil {
		after = *req.After
	}
	return find(s.entries(f, after), f, req), nil
}

// find is Find of the entries next yields.
func find(next func() (int64, Order, bool), f Filter, req PageRequest) Page {
	p := Page{Orders: []Order{}}
	if req.After != nil {
		p.Resume = *req.After
	}
	for examined := 0; ; examined++ {
		id, o, ok := next()
		if !ok {
			p.End = true
			return p
		}
		if examined == req.Budget() {
			return p // an entry is left: not the end
		}
		p.Resume = id
		if f.Matches(o) {
			if p.Orders = append(p.Orders, o); len(p.Orders) == req.Size {
				_, _, more := next()
				p.End = !more
				return p
			}
		}
	}
}

// entries returns the index entries after the id after that f reads, in id order, each with
// its order.
func (s *Snapshot) entries(f Filter, after int64) func() (int64, Order, bool) {
	if f.PetID != nil {
		return s.keyed(s.byPet, *f.PetID, after)
	}
	switch st := f.StatusesToIndex(); len(st) {
	case 1:
		return s.keyed(s.byStatus, int64(rowOf(Order{Status: st[0]}).status), after)
	case 2:
		return merge(s.keyed(s.byStatus, int64(rowOf(Order{Status: st[0]}).status), after),
			s.keyed(s.byStatus, int64(rowOf(Order{Status: st[1]}).status), after))
	}
	it := s.byID.Iter()
	more := after < maxID && it.Seek(row{id: after + 1})
	return func() (int64, Order, bool) {
		if !more {
			return 0, Order{}, false
		}
		r := it.Item()
		more = it.Next()
		return r.id, r.order(), true
	}
}

const maxID = 1<<63 - 1

// keyed returns the ids an index holds under key, after the id after, with their orders.
func (s *Snapshot) keyed(index *btree.BTreeG[indexKey], key, after int64) func() (int64, Order, bool) {
	it := index.Iter()
	more := after < maxID && it.Seek(indexKey{key, after + 1})
	return func() (int64, Order, bool) {
		if !more || it.Item().key != key {
			more = false
			return 0, Order{}, false
		}
		id := it.Item().id
		more = it.Next()
		r, _ := s.byID.Get(row{id: id})
		return id, r.order(), true
	}
}

// merge yields the entries of a and b, each in id order and without an id in common, in id order.
func merge(a, b func() (int64, Order, bool)) func() (int64, Order, bool) {
	type head struct {
		id int64
		o  Order
		ok bool
	}
	pull := func(next func() (int64, Order, bool)) head {
		id, o, ok := next()
		return head{id, o, ok}
	}
	x, y := pull(a), pull(b)
	return func() (int64, Order, bool) {
		switch {
		case x.ok && (!y.ok || x.id < y.id):
			h := x
			x = pull(a)
			return h.id, h.o, true
		case y.ok:
			h := y
			y = pull(b)
			return h.id, h.o, true
		}
		return 0, Order{}, false
	}
}
