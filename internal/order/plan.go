// Package plan names the plans an API key can have and the request limits of each.
package order

import "fmt"

// Plan is the name of a plan.
type Plan string

// The plans of the service. Enterprise limits are set per key.
const (
	Free       Plan = "free"
	Pro        Plan = "pro"
	Business   Plan = "business"
	Enterprise Plan = "enterprise"
)

// Limits are the requests a caller may make per UTC minute and per UTC day.
type Limits struct {
	PerMinute int64 `json:"perMinute"`
	PerDay    int64 `json:"perDay"`
}

// MaxLimit bounds each enterprise limit: RateLimit-Policy carries the limits as RFC 8941
// integers, which have at most 15 digits, and rate.lua counts in doubles, exact below 2^53.
const MaxLimit = 999_999_999_999_999

// Capped returns l with each limit above MaxLimit lowered to it: how a key stored before the
// bound is read, so that it still works, within the bound.
func (l Limits) Capped() Limits {
	return Limits{PerMinute: min(l.PerMinute, MaxLimit), PerDay: min(l.PerDay, MaxLimit)}
}

var fixed = map[Plan]Limits{
	Free:     {PerMinute: 60, PerDay: 1_000},
	Pro:      {PerMinute: 300, PerDay: 10_000},
	Business: {PerMinute: 1_000, PerDay: 100_000},
}

// ParsePlan returns the plan named s.
func ParsePlan(s string) (Plan, error) {
	p := Plan(s)
	if _, ok := fixed[p]; ok || p == Enterprise {
		return p, nil
	}
	return "", fmt.Errorf("unknown plan %q (want free, pro, business or enterprise)", s)
}

// LimitsFor returns the limits of plan p: custom for enterprise, whose limits belong to the
// key; the fixed ones for the other plans, for which custom must be zero.
func LimitsFor(p Plan, custom Limits) (Limits, error) {
	if p == Enterprise {
		if custom.PerMinute < 1 || custom.PerDay < 1 {
			return Limits{}, fmt.Errorf("plan enterprise needs both limits, each at least 1")
		}
		if custom.PerMinute > MaxLimit || custom.PerDay > MaxLimit {
			return Limits{}, fmt.Errorf("plan enterprise: each limit at most 999,999,999,999,999 (per-minute %d, per-day %d)", custom.PerMinute, custom.PerDay)
		}
		if custom.PerMinute > custom.PerDay {
			return Limits{}, fmt.Errorf("per-minute limit %d is above the per-day limit %d", custom.PerMinute, custom.PerDay)
		}
		return custom, nil
	}
	l, ok := fixed[p]
	if !ok {
		return Limits{}, fmt.Errorf("unknown plan %q", p)
	}
	if custom != (Limits{}) {
		return Limits{}, fmt.Errorf("plan %s has fixed limits; per-minute and per-day are for enterprise only", p)
	}
	return l, nil
}
