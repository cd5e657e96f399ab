package ordertest

import (
	"context"
	"sync"

	"github.com/petstore/orderd/internal/order"
)

// views are the View of each store the suites read, made at the first read: a store is read
// through one View for the whole test, as an instance reads it, so that the reads after a
// change follow the log from the View's snapshot (and the first one loads).
var views sync.Map // order.Store → *order.View

// Viewed reads s as the service does, through its View.
func Viewed(s order.Store) Reader {
	v, _ := views.LoadOrStore(s, order.NewView(s))
	return Reader{v.(*order.View)}
}

// Reader reads the orders of a store through a View: the list, pages and orders by id.
type Reader struct{ view *order.View }

// List returns every order, sorted by id.
func (r Reader) List(ctx context.Context) ([]order.Order, error) {
	s, err := r.view.Current(ctx)
	if err != nil {
		return nil, err
	}
	out := []order.Order{}
	for o := range s.All() {
		out = append(out, o)
	}
	return out, nil
}

// Find returns one page of f.
func (r Reader) Find(ctx context.Context, f order.Filter, req order.PageRequest) (order.Page, error) {
	s, err := r.view.Current(ctx)
	if err != nil {
		return order.Page{}, err
	}
	return s.Find(f, req)
}

// Get returns the order with the id, or order.ErrNotFound.
func (r Reader) Get(ctx context.Context, id int64) (order.Order, error) {
	s, err := r.view.Current(ctx)
	if err != nil {
		return order.Order{}, err
	}
	if o, ok := s.Get(id); ok {
		return o, nil
	}
	return order.Order{}, order.ErrNotFound
}

// Fresh reads s through a View of its own, made now: each read of it loads the orders
// again, as a new instance would.
func Fresh(s order.Store) Reader { return Reader{order.NewView(s)} }
