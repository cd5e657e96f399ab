package webhook

import (
	"testing"
	"time"
)

// TestDefaultSchedule: the waits the docs name, each at most 10% longer, and the attempts
// an event gets before its endpoint is marked failing.
func TestDefaultSchedule(t *testing.T) {
	want := []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute,
		30 * time.Minute, time.Hour, 2 * time.Hour, 2 * time.Hour, 2 * time.Hour}
	for i, w := range want {
		if got := DefaultSchedule.wait(i + 1); got < w || got > w+w/10 {
			t.Errorf("wait after attempt %d = %s, want %s to %s", i+1, got, w, w+w/10)
		}
	}
	// Without jitter, the most attempts: docs/operations.md says 19.
	s := DefaultSchedule
	s.Jitter = 0
	attempts, since := 1, time.Duration(0)
	for since < s.GiveUpAfter {
		since += s.wait(attempts)
		attempts++
	}
	if attempts != 19 {
		t.Errorf("%d attempts in %s, want 19", attempts, s.GiveUpAfter)
	}
}
