package order

import (
	"errors"
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
	seen := idSet{other: map[int64]bool{}}
	return func(r T) error {
		if err := r.Validate(); err != nil {
			return err
		}
		if kind, id := r.identity(); !seen.add(id) {
			return fmt.Errorf("%s %d: duplicate id", kind, id)
		}
		return nil
	}
}

// idSet is a set of ids kept in a sorted list while they rise, as in data files, and in a
// map when they do not: a map of a million ids was a quarter of an import's reading.
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
	s.other[id] = true
	return true
}

// ValidateAll reports the first record CheckEach refuses; stores run it before writing any.
func ValidateAll[T Record](list []T) error {
	return Slice(list, len(list))(CheckEach[T](), func([]T) error { return nil })
}

// Batches reads records in turn, running check on each as it reads it (so that a refusal can
// name the record's place), and hands them to each in batches, in order; it stops at the
// first error of either. It can be read more than once: an import reads it once to check
// every record, then again to write them, holding one batch at a time.
type Batches[T Record] func(check func(T) error, each func([]T) error) error

// Slice is the Batches of a list in memory, in batches of up to size.
func Slice[T Record](list []T, size int) Batches[T] {
	return func(check func(T) error, each func([]T) error) error {
		for part := range slices.Chunk(list, max(1, size)) {
			for _, r := range part {
				if err := check(r); err != nil {
					return err
				}
			}
			if err := each(part); err != nil {
				return err
			}
		}
		return nil
	}
}

// ReadAhead is b read in a goroutine of its own, up to depth batches ahead of each: the
// reading (decoding a file) and the writing take their time side by side. check runs in
// that goroutine.
func ReadAhead[T Record](b Batches[T], depth int) Batches[T] {
	return func(check func(T) error, each func([]T) error) error {
		batches, stop, read := make(chan []T, depth), make(chan struct{}), make(chan error, 1)
		go func() {
			defer close(batches)
			read <- b(check, func(batch []T) error {
				select {
				case batches <- batch:
					return nil
				case <-stop:
					return errStopped
				}
			})
		}()
		for batch := range batches {
			if err := each(batch); err != nil {
				close(stop)
				<-read // batches is not read from now: the reader stops once it is full, or before
				return err
			}
		}
		return <-read
	}
}

// errStopped ends the reading of a ReadAhead whose each failed; it is never returned.
var errStopped = errors.New("stopped")
