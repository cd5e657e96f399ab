package order

import (
	"slices"
	"testing"
	"time"
)

// TestPageOf: a page stops at its Size-th match, ends only when the entries read did not
// pass the budget and none is left after the page, and resumes after the last one examined.
func TestPageOf(t *testing.T) {
	read := func(n int, shippedEvery int) []Candidate {
		out := make([]Candidate, n)
		for i := range out {
			st := StatusPending
			if shippedEvery > 0 && i%shippedEvery == 0 {
				st = StatusShipped
			}
			out[i] = Candidate{ID: int64(10 + i), Order: Order{ID: int64(10 + i), Status: st, ShipDate: time.Unix(0, 0)}, Exists: true}
		}
		return out
	}
	ids := func(p Page) []int64 {
		var out []int64
		for _, o := range p.Orders {
			out = append(out, o.ID)
		}
		return out
	}
	shipped := Filter{Statuses: []Status{StatusShipped}}
	after := int64(9)
	for _, tc := range []struct {
		name   string
		f      Filter
		req    PageRequest
		read   []Candidate
		want   []int64
		resume int64
		end    bool
	}{
		{"FullPageStopsAtTheSizethMatch", shipped, PageRequest{Size: 2}, read(10, 3), []int64{10, 13}, 13, false},
		{"FullPageOnTheLastEntryEnds", shipped, PageRequest{Size: 4}, read(10, 3), []int64{10, 13, 16, 19}, 19, true},
		{"ShortPageEnds", shipped, PageRequest{Size: 5}, read(10, 3), []int64{10, 13, 16, 19}, 19, true},
		{"NothingReadEndsWhereItStarted", Filter{}, PageRequest{After: &after, Size: 5}, nil, nil, 9, true},
		{"OverTheBudgetIsNotTheEnd", shipped, PageRequest{Size: 5}, read(ScanBudget+1, 0), nil, int64(10 + ScanBudget - 1), false},
		{"HalfWrittenIsExaminedNotReturned", Filter{}, PageRequest{Size: 5}, []Candidate{{ID: 4}}, nil, 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := PageOf(tc.f, tc.req, tc.read)
			if !slices.Equal(ids(p), tc.want) || p.Resume != tc.resume || p.End != tc.end {
				t.Fatalf("PageOf = %v resume %d end %v; want %v resume %d end %v", ids(p), p.Resume, p.End, tc.want, tc.resume, tc.end)
			}
		})
	}
}

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
