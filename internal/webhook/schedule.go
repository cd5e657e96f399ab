package webhook

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// Schedule says when a failed event is tried again, and when to give up on it. Not
// github.com/cenkalti/backoff's: ours is an operator's list, its jitter only lengthens a wait,
// and its state (the attempts) is saved with the endpoint for whichever instance holds it next.
type Schedule struct {
	Backoff     []time.Duration // Backoff[i] is the wait after the (i+1)-th failed attempt; the last one repeats
	GiveUpAfter time.Duration   // after the event's first failure: the endpoint is then marked failing
	Jitter      float64         // a random part up to this fraction of each wait, lest endpoints that failed together retry together
}

// DefaultSchedule is 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, then every 2 h, for 24 h after
// the first failure of an event, each wait up to 10% longer at random: about 16 attempts.
var DefaultSchedule = Schedule{
	Backoff: []time.Duration{
		5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute,
		time.Hour, 2 * time.Hour,
	},
	GiveUpAfter: 24 * time.Hour,
	Jitter:      0.1,
}

// Check refuses a schedule that would never wait, or wait less after more failures.
func (s Schedule) Check() error {
	if len(s.Backoff) == 0 || slices.Min(s.Backoff) <= 0 || !slices.IsSorted(s.Backoff) || s.GiveUpAfter <= 0 {
		return fmt.Errorf("the retry schedule's waits must be positive and never decrease (not %v), and the time to give up positive (not %s)", s.Backoff, s.GiveUpAfter)
	}
	return nil
}

// wait is the wait after the attempts-th failed attempt (1 after the first).
func (s Schedule) wait(attempts int) time.Duration {
	d := s.Backoff[min(max(attempts, 1), len(s.Backoff))-1]
	return d + time.Duration(rand.Float64()*s.Jitter*float64(d))
}
