package order

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Filter selects orders: every field that is set must hold; an empty Filter selects every
// order.
type Filter struct {
	Statuses             []Status   // when not empty, the states kept
	PetID                *int64     // when set, the pet whose orders are kept
	ShipFrom, ShipBefore *time.Time // shipped at or after ShipFrom, strictly before ShipBefore
}

// Matches reports whether o is one of the orders f selects: the one statement of the rule,
// which the stores apply to the candidates they read from an index.
func (f Filter) Matches(o Order) bool {
	switch {
	case len(f.Statuses) > 0 && !slices.Contains(f.Statuses, o.Status):
		return false
	case f.PetID != nil && o.PetID != *f.PetID:
		return false
	case f.ShipFrom != nil && o.ShipDate.Before(*f.ShipFrom):
		return false
	case f.ShipBefore != nil && !o.ShipDate.Before(*f.ShipBefore):
		return false
	}
	return true
}

// Empty reports whether f selects no order, whatever the store holds: ShipFrom is at or
// after ShipBefore.
func (f Filter) Empty() bool {
	return f.ShipFrom != nil && f.ShipBefore != nil && !f.ShipFrom.Before(*f.ShipBefore)
}

// StatusesToIndex returns the states whose index a store reads for f, sorted and without
// repeats, or nil when f does not narrow by state (no state, or all three).
func (f Filter) StatusesToIndex() []Status {
	s := slices.Clone(f.Statuses)
	slices.Sort(s)
	s = slices.Compact(s)
	if len(s) == 0 || len(s) == 3 {
		return nil
	}
	return s
}

// MaxPageSize is the most orders one page may ask for: it bounds the memory of a page.
const MaxPageSize = 1000

// ScanBudget is the fewest index entries one Find may examine: a call examines at most
// PageRequest.Budget() entries however few match, so its work is bounded (well under a
// millisecond of the Redis thread every instance shares), and a walk through a filter that
// matches almost nothing still moves 1000 ids a call.
const ScanBudget = 1000

// ErrBadRequest is a Filter or PageRequest that no store can answer.
var ErrBadRequest = errors.New("bad find request")

// PageRequest is one page of a walk in ascending id order.
type PageRequest struct {
	After *int64 // when set, the page starts after this id (the previous page's Resume)
	Size  int    // the most orders the page holds: 1 to MaxPageSize
}

// Budget is how many index entries a Find for r may examine: enough for a full page.
func (r PageRequest) Budget() int { return max(r.Size, ScanBudget) }

// Page is the answer of a Find: up to Size matching orders, in ascending id order, and where
// the walk stands. It may hold fewer than Size, even none, while End is false: the budget ran
// out first.
type Page struct {
	Orders []Order
	// Resume is the last id the call examined (or the request's After when it examined
	// none): the After of the next page.
	Resume int64
	// End is true when the call examined every id after After: there is no next page.
	End bool
}

// Finder reads orders by filter, a page at a time, and one by id. A walk that passes each
// page's Resume as the next After sees every order that existed for the whole walk exactly
// once (one cancelled meanwhile, with either status).
type Finder interface {
	// Find returns the orders with an id after req.After that f keeps, examining at most
	// req.Budget() index entries. It returns an error wrapping ErrBadRequest for an invalid
	// f or req.
	Find(ctx context.Context, f Filter, req PageRequest) (Page, error)
	// Get returns the order with the given id, or ErrNotFound.
	Get(ctx context.Context, id int64) (Order, error)
}

// CheckFind validates a Find's arguments, as every Finder does first: a state that does not
// exist, or a page size out of range, is an error wrapping ErrBadRequest.
func CheckFind(f Filter, req PageRequest) error {
	for _, s := range f.Statuses {
		if !s.Valid() {
			return fmt.Errorf("%w: status %q is not pending, shipped or cancelled", ErrBadRequest, s)
		}
	}
	if req.Size < 1 || req.Size > MaxPageSize {
		return fmt.Errorf("%w: page size %d is not between 1 and %d", ErrBadRequest, req.Size, MaxPageSize)
	}
	return nil
}

// Candidate is one index entry a Find read: an id, and its order when it exists (an index may
// name an id whose order is half-written or gone: examined, not returned).
type Candidate struct {
	ID     int64
	Order  Order
	Exists bool
}

// PageOf makes the Page of a Find from the entries it read after req.After, in ascending id
// order without repeats: up to req.Budget()+1 of them, one more than the budget saying that
// the end is not reached. It keeps the matches of f up to req.Size.
func PageOf(f Filter, req PageRequest, read []Candidate) Page {
	p := Page{Orders: []Order{}, End: len(read) <= req.Budget()}
	if req.After != nil {
		p.Resume = *req.After
	}
	read = read[:min(len(read), req.Budget())]
	for i, c := range read {
		p.Resume = c.ID
		if c.Exists && f.Matches(c.Order) {
			p.Orders = append(p.Orders, c.Order)
			if len(p.Orders) == req.Size {
				p.End = p.End && i == len(read)-1
				break
			}
		}
	}
	return p
}
