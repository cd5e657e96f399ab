package order

import (
	"math/rand/v2"
	"testing"
)

// TestIDSet: idSet answers as a map would, whatever order the ids come in.
func TestIDSet(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for run := range 200 {
		s := idSet{other: map[int64]bool{}}
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
			if got, want := s.add(id), !model[id]; got != want {
				t.Fatalf("run %d: add(%d) = %v, want %v", run, id, got, want)
			}
			model[id] = true
		}
	}
}
