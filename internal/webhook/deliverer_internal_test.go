package webhook

import (
	"testing"
	"time"
)

// TestPollFollowsTheLease: a lapsed lease is noticed within a third of it more, or 5 s.
func TestPollFollowsTheLease(t *testing.T) {
	for _, tc := range []struct{ lease, poll time.Duration }{
		{0, 5 * time.Second}, // the defaults: 30 s and 5 s, as before the lease was a flag
		{2 * time.Minute, 5 * time.Second},
		{3 * time.Second, time.Second},
	} {
		if got := NewDeliverer(Config{LeaseTTL: tc.lease}).cfg.Poll; got != tc.poll {
			t.Errorf("lease %s: poll %s, want %s", tc.lease, got, tc.poll)
		}
	}
}
