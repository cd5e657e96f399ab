package order

import (
	"math/rand/v2"
	"testing"
)

// TestCheckEachIDs: CheckEach's ids, kept in a sorted list while they rise, answer as a map
// would, whatever order the ids come in.
func TestCheckEachIDs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for run := range 200 {
		check := CheckEach[Order]()
		model := map[int64]bool{}
		next := int64(0)
		for range 500 {
			id := next
			switch r.IntN(4) {
			case 0: // an earlier id, or one never seen below the last
				id = r.Int64N(next + 1)
			default:
				next += r.Int64N(3)
			}
			if got, want := check(Order{ID: id, Status: StatusPending}) == nil, !model[id]; got != want {
				t.Fatalf("run %d: id %d taken %v, want %v", run, id, got, want)
			}
			model[id] = true
		}
	}
}
