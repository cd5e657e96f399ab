package order

import (
	"errors"
	"slices"
	"time"
)

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

// MaxPageSize is the most orders one page may ask for: it bounds the memory of a page.
const MaxPageSize = 1000

// ScanBudget is the fewest index entries one Find may examine: bounded work per call (the
// Redis thread is shared), yet a walk through a sparse filter still moves 1000 ids a call.
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

// Page is the answer of a Find: up to Size matching orders in id order; fewer, even none,
// while End is false means the budget ran out first.
type Page struct {
	Orders []Order
	Resume int64 // the last id examined (else the request's After): the next page's After
	End    bool  // every id after After was examined: there is no next page
}
