package ratelimit

import (
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
)

func TestWindowEnds(t *testing.T) {
	now := time.Date(2026, 11, 23, 23, 59, 59, 999_000_000, time.UTC)
	m, d := WindowEnds(now)
	if !m.Equal(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)) || !d.Equal(m) {
		t.Fatalf("ends %v %v", m, d)
	}
	m, d = WindowEnds(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
	if !m.Equal(time.Date(2026, 11, 24, 0, 1, 0, 0, time.UTC)) || !d.Equal(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("at a boundary the new windows start: %v %v", m, d)
	}
	// A clock in another zone names the same instants.
	m2, d2 := WindowEnds(time.Date(2026, 11, 24, 1, 0, 0, 0, time.FixedZone("CET", 3600)))
	if !m2.Equal(time.Date(2026, 11, 24, 0, 1, 0, 0, time.UTC)) || !d2.Equal(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("zone changed the windows: %v %v", m2, d2)
	}
}

func TestDecideBindingWindow(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 17, 500_000_000, time.UTC)
	free := order.Limits{PerMinute: 60, PerDay: 1000}
	for _, tc := range []struct {
		name           string
		o              Outcome
		limits         order.Limits
		binding        string
		remaining      int64
		retryAfterSecs int64
	}{
		{"minute binds", Outcome{Admitted: true, MinuteCount: 1, DayCount: 1}, free, Minute, 59, 43},
		{"day binds when it has fewer left", Outcome{Admitted: true, MinuteCount: 1, DayCount: 990}, free, Day, 10, 50383},
		{"tie: the later window", Outcome{Admitted: true, MinuteCount: 50, DayCount: 990}, free, Day, 10, 50383},
		{"minute full", Outcome{MinuteCount: 60, DayCount: 100}, free, Minute, 0, 43},
		{"day full", Outcome{MinuteCount: 3, DayCount: 1000}, free, Day, 0, 50383},
		{"both full", Outcome{MinuteCount: 60, DayCount: 1000}, free, Day, 0, 50383},
	} {
		d := Decide(tc.o, tc.limits, now)
		if d.Allowed != tc.o.Admitted || d.Binding.Name != tc.binding || d.Binding.Remaining != tc.remaining ||
			d.RetryAfter != time.Duration(tc.retryAfterSecs)*time.Second {
			t.Errorf("%s: %+v", tc.name, d)
		}
	}
	ban := now.Add(15 * time.Minute)
	d := Decide(Outcome{MinuteCount: 60, DayCount: 60, BannedUntil: ban}, free, now)
	if d.Allowed || !d.Banned || d.Binding.Remaining != 0 || !d.Binding.End.Equal(ban) || d.RetryAfter != 15*time.Minute {
		t.Errorf("banned: %+v", d)
	}
	// Half a second before a window ends, Retry-After is still at least one second.
	d = Decide(Outcome{MinuteCount: 60}, free, time.Date(2026, 11, 23, 10, 0, 59, 500_000_000, time.UTC))
	if d.RetryAfter != time.Second {
		t.Errorf("RetryAfter %v, want 1s", d.RetryAfter)
	}
}
