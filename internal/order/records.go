package order

import "fmt"

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
	seen := map[int64]bool{}
	return func(r T) error {
		if err := r.Validate(); err != nil {
			return err
		}
		kind, id := r.identity()
		if seen[id] {
			return fmt.Errorf("%s %d: duplicate id", kind, id)
		}
		seen[id] = true
		return nil
	}
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
