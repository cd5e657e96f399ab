package order

import (
	"math"
	"testing"
)

func TestLimitsFor(t *testing.T) {
	for _, tc := range []struct {
		plan   Plan
		custom Limits
		want   Limits
		ok     bool
	}{
		{Free, Limits{}, Limits{60, 1_000}, true},
		{Pro, Limits{}, Limits{300, 10_000}, true},
		{Business, Limits{}, Limits{1_000, 100_000}, true},
		{Enterprise, Limits{5, 50}, Limits{5, 50}, true},
		{Enterprise, Limits{}, Limits{}, false},
		{Enterprise, Limits{0, 50}, Limits{}, false},
		{Enterprise, Limits{60, 50}, Limits{}, false},
		{Enterprise, Limits{MaxLimit, MaxLimit}, Limits{MaxLimit, MaxLimit}, true},
		{Enterprise, Limits{5, MaxLimit + 1}, Limits{}, false},
		{Enterprise, Limits{MaxLimit + 1, MaxLimit + 1}, Limits{}, false},
		{Enterprise, Limits{math.MaxInt64, math.MaxInt64}, Limits{}, false},
		{Free, Limits{5, 50}, Limits{}, false},
		{"gold", Limits{}, Limits{}, false},
	} {
		got, err := LimitsFor(tc.plan, tc.custom)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("LimitsFor(%s, %+v) = %+v, %v", tc.plan, tc.custom, got, err)
		}
	}
	if got := (Limits{5, math.MaxInt64}).Capped(); got != (Limits{5, MaxLimit}) {
		t.Errorf("Capped = %+v", got)
	}
	for _, s := range []string{"free", "pro", "business", "enterprise"} {
		if p, err := ParsePlan(s); err != nil || string(p) != s {
			t.Errorf("ParsePlan(%q) = %q, %v", s, p, err)
		}
	}
	if _, err := ParsePlan("Free"); err == nil {
		t.Error("Parse accepted Free")
	}
}
