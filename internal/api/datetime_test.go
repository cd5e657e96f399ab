package api

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/orderd/internal/order"
)

// dateTimeCases are values of a date-time parameter and a part of the reason each is refused
// for ("" for a value that is accepted).
var dateTimeCases = []struct{ value, fault string }{
	{"2026-11-16T00:00:00Z", ""},
	{"2026-11-16T23:59:59.999999999Z", ""},
	{"2026-11-16T10:00:00.5+01:00", ""},
	{"2026-11-16T10:00:00.1234567891234Z", ""}, // any number of digits; beyond 9, not kept
	{"2026-11-16T10:00:00-00:00", ""},
	{"2026-11-16T10:00:00+23:59", ""},
	{"2026-11-16T10:00:00-23:59", ""},
	{"2024-02-29T00:00:00Z", ""},
	{"2000-02-29T00:00:00Z", ""},
	{"0000-01-01T00:00:00Z", ""},
	{"9999-12-31T23:59:59Z", ""},
	{"2026-12-31T23:59:60Z", "second 60 (a leap second) is not accepted"},
	{"2026-11-16T10:00:61Z", "second 61 is out of range"},
	{"2026-02-30T00:00:00Z", "February 2026 has no day 30: it has 28 days"},
	{"2025-02-29T00:00:00Z", "February 2025 has no day 29"},
	{"1900-02-29T00:00:00Z", "February 1900 has no day 29"},
	{"2026-04-31T00:00:00Z", "April 2026 has no day 31"},
	{"2026-01-00T00:00:00Z", "January 2026 has no day 00"},
	{"2026-13-01T00:00:00Z", "month 13 does not exist"},
	{"2026-00-01T00:00:00Z", "month 00 does not exist"},
	{"2026-11-16T24:00:00Z", "hour 24 is out of range"},
	{"2026-11-16T10:60:00Z", "minute 60 is out of range"},
	{"2026-11-03T11:00:00+24:00", "offset +24:00 is out of range"},
	{"2026-11-03T11:00:00+99:00", "offset +99:00 is out of range"},
	{"2026-11-03T11:00:00-23:60", "offset -23:60 is out of range"},
	{"2026-11-03T11:00:00+0100", order.DateTimeShape},
	{"2026-11-03T11:00:00+01", order.DateTimeShape},
	{"2026-11-03T11:00:00", order.DateTimeShape},
	{"2026-11-03T11:00Z", order.DateTimeShape},
	{"2026-11-03t11:00:00Z", order.DateTimeShape},
	{"2026-11-03T11:00:00z", order.DateTimeShape},
	{"2026-11-03 11:00:00Z", order.DateTimeShape},
	{"2026-11-03T11:00:00.Z", order.DateTimeShape},
	{"2026-11-03T11:00:00,5Z", order.DateTimeShape},
	{"2026-11-03T11:00:00Z ", order.DateTimeShape},
	{"+2026-11-03T11:00:00Z", order.DateTimeShape},
	{"20261-11-03T11:00:00Z", order.DateTimeShape},
	{"2026-1-03T11:00:00Z", order.DateTimeShape},
	{"2026-11-03T11:00:00+-1:00", order.DateTimeShape},
	{"２026-11-03T11:00:00Z", order.DateTimeShape},
	{"2026-11-03", order.DateTimeShape},
	{"", order.DateTimeShape},
}

func TestDateTimeFault(t *testing.T) {
	for _, c := range dateTimeCases {
		got := order.DateTimeFault(c.value)
		if (c.fault == "") != (got == "") || !strings.Contains(got, c.fault) {
			t.Errorf("%q: %q, want %q", c.value, got, c.fault)
		}
	}
}

// kinDateTime is kin-openapi's check of the format date-time, which runs before order.DateTimeFault.
var kinDateTime = regexp.MustCompile(openapi3.FormatOfStringDateTime)

// FuzzDateTimeFault: every value order.DateTimeFault accepts is one kin-openapi's format check
// accepts too, and one the generated binding reads (time.RFC3339Nano) as the instant it
// names, with its offset.
func FuzzDateTimeFault(f *testing.F) {
	for _, c := range dateTimeCases {
		f.Add(c.value)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if order.DateTimeFault(s) != "" {
			return
		}
		if !kinDateTime.MatchString(s) {
			t.Fatalf("%q is accepted, but not by kin-openapi's pattern", s)
		}
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatalf("%q is accepted, but time.Parse refuses it: %v", s, err)
		}
		if got, want := at.Format("2006-01-02T15:04:05"), s[:19]; got != want {
			t.Fatalf("%q reads as %v", s, at)
		}
	})
}
