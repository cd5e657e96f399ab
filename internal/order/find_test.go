package order

import (
	"testing"
	"time"
)

// TestFilterMatches: the ship-date range is [ShipFrom, ShipBefore), and the fields combine
// with AND.
func TestFilterMatches(t *testing.T) {
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	next := day.Add(24 * time.Hour)
	pet := int64(7)
	o := Order{ID: 1, PetID: 7, ShipDate: day, Status: StatusPending}
	for _, tc := range []struct {
		f    Filter
		want bool
	}{
		{Filter{}, true},
		{Filter{ShipFrom: &day}, true},
		{Filter{ShipBefore: &day}, false},
		{Filter{ShipFrom: &day, ShipBefore: &next}, true},
		{Filter{ShipFrom: &next}, false},
		{Filter{Statuses: []Status{StatusShipped, StatusPending}, PetID: &pet}, true},
		{Filter{Statuses: []Status{StatusPending}, PetID: new(int64)}, false},
		{Filter{Statuses: []Status{StatusCancelled}, PetID: &pet}, false},
	} {
		if got := tc.f.Matches(o); got != tc.want {
			t.Errorf("%+v.Matches = %v, want %v", tc.f, got, tc.want)
		}
	}
}

// TestFilterEmpty: a filter is empty exactly when its ship-date range holds no instant, and
// an empty filter matches no order, whatever its ship date.
func TestFilterEmpty(t *testing.T) {
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	next, paris := day.Add(time.Nanosecond), day.In(time.FixedZone("CET", 3600))
	for _, tc := range []struct {
		f    Filter
		want bool
	}{
		{Filter{}, false},
		{Filter{ShipFrom: &day}, false},
		{Filter{ShipBefore: &day}, false},
		{Filter{ShipFrom: &day, ShipBefore: &next}, false},
		{Filter{ShipFrom: &day, ShipBefore: &day}, true},
		{Filter{ShipFrom: &day, ShipBefore: &paris}, true}, // the same instant in another zone
		{Filter{ShipFrom: &next, ShipBefore: &day}, true},
	} {
		if got := tc.f.Empty(); got != tc.want {
			t.Errorf("%+v.Empty = %v, want %v", tc.f, got, tc.want)
		}
		if !tc.f.Empty() {
			continue
		}
		for _, at := range []time.Time{day.Add(-time.Hour), day, next, day.Add(time.Hour)} {
			if tc.f.Matches(Order{ShipDate: at}) {
				t.Errorf("the empty %+v matches an order shipped at %v", tc.f, at)
			}
		}
	}
}
