package order

import (
	"fmt"
	"slices"
)

// Record is what the service imports from data files and other systems: an order or a pet.
type Record interface {
	Order | Pet
	Validate() error
	identity() (kind string, id int64)
}

func (o Order) identity() (string, int64) { return "order", o.ID }
func (p Pet) identity() (string, int64)   { return "pet", p.ID }

// CheckEach returns a check of records in turn: each valid, with an id no earlier one had.
// A file reader runs it as it decodes, so that an error can name the record's place.
func CheckEach[T Record]() func(T) error {
	var seen idSet
	return func(r T) error {
		if err := r.Validate(); err != nil {
			return err
		}
		kind, id := r.identity()
		if !seen.add(id) {
			return fmt.Errorf("%s %d: duplicate id", kind, id)
		}
		return nil
	}
}

// idSet is a set of ids, small and fast when they come mostly in increasing order, as in
// data files (a million of them): those are kept in a sorted list, the others in a map.
type idSet struct {
	rising []int64
	other  map[int64]bool
}

// add adds id and reports whether it was new.
func (s *idSet) add(id int64) bool {
	if n := len(s.rising); n == 0 || id > s.rising[n-1] {
		s.rising = append(s.rising, id)
		return true
	}
	if _, found := slices.BinarySearch(s.rising, id); found || s.other[id] {
		return false
	}
	if s.other == nil {
		s.other = map[int64]bool{}
	}
	s.other[id] = true
	return true
}

// ValidateAll reports the first record CheckEach refuses; stores run it before writing any.
func ValidateAll[T Record](list []T) error {
	check := CheckEach[T]()
	for _, r := range list {
		if err := check(r); err != nil {
			return err
		}
	}
	return nil
}
