package order

import (
	"fmt"
	"time"
)

// DateTimeShape tells a client what an RFC 3339 date-time looks like.
const DateTimeShape = "must be an RFC 3339 date-time, such as 2026-11-16T00:00:00Z"

// DateTimeFault says why s is not an RFC 3339 date-time (upper-case T and Z, a day that
// exists, no leap second), or "". kin-openapi's format check lets through second 60, days 29
// to 31 of any month and any two-digit offset; time.Parse reads +24:00 and +23:60. Read by
// hand, not by a regexp: an import checks a million dates.
func DateTimeFault(s string) string {
	zone := len("2006-01-02T15:04:05") // where the offset starts, after a fraction if any
	if shaped(s, zone, ".9") {
		for zone += 2; shaped(s, zone, "9"); zone++ {
		}
	}
	offset := s[min(zone, len(s)):]
	if !shaped(s, 0, "9999-99-99T99:99:99") || offset != "Z" && !shaped(offset, 0, "+99:99") && !shaped(offset, 0, "-99:99") ||
		len(offset) > len("+99:99") {
		return DateTimeShape
	}
	n := func(i int) int { return int(s[i]-'0')*10 + int(s[i+1]-'0') }
	year, month, day, hour, minute, second := n(0)*100+n(2), time.Month(n(5)), n(8), n(11), n(14), n(17)
	days := time.Date(year, month+1, 0, 0, 0, 0, 0, time.UTC).Day()
	switch {
	case offset != "Z" && (n(zone+1) > 23 || n(zone+4) > 59):
		return fmt.Sprintf("offset %s is out of range: hours 00 to 23, minutes 00 to 59", offset)
	case month < 1 || month > 12:
		return fmt.Sprintf("month %02d does not exist", month)
	case day < 1 || day > days:
		return fmt.Sprintf("%s %04d has no day %02d: it has %d days", month, year, day, days)
	case hour > 23:
		return fmt.Sprintf("hour %02d is out of range: 00 to 23", hour)
	case minute > 59:
		return fmt.Sprintf("minute %02d is out of range: 00 to 59", minute)
	case second == 60:
		return "second 60 (a leap second) is not accepted: seconds are 00 to 59"
	case second > 59:
		return fmt.Sprintf("second %02d is out of range: 00 to 59", second)
	}
	return ""
}

// shaped reports whether s has pattern at i, where a 9 of pattern is any ASCII digit.
func shaped(s string, i int, pattern string) bool {
	if i > len(s) || len(s)-i < len(pattern) {
		return false
	}
	for j := range len(pattern) {
		if c := s[i+j]; pattern[j] == '9' && (c < '0' || c > '9') || pattern[j] != '9' && c != pattern[j] {
			return false
		}
	}
	return true
}
