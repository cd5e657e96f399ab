package order

import (
	"fmt"
	"time"
)

// DateTimeShape tells a client what an RFC 3339 date-time looks like.
const DateTimeShape = "must be an RFC 3339 date-time, such as 2026-11-16T00:00:00Z"

// DateTimeFault says why s is not an RFC 3339 date-time (upper-case T and Z, a day that
// exists, no leap second), or "". kin-openapi's format check lets through second 60, days 29
// to 31 of any month and any two-digit offset; time.Parse reads +24:00 and +23:60.
func DateTimeFault(s string) string {
	n, ok := dateTimeFields(s)
	if !ok {
		return DateTimeShape
	}
	year, month, day, hour, minute, second := n[0], n[1], n[2], n[3], n[4], n[5]
	switch {
	case n[6] > 23 || n[7] > 59:
		return fmt.Sprintf("offset %s is out of range: hours 00 to 23, minutes 00 to 59", s[len(s)-6:])
	case month < 1 || month > 12:
		return fmt.Sprintf("month %02d does not exist", month)
	case day < 1 || day > daysIn(year, time.Month(month)):
		return fmt.Sprintf("%s %04d has no day %02d: it has %d days", time.Month(month), year, day, daysIn(year, time.Month(month)))
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

// dateTimeFields matches s to ^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.\d+)?(?:Z|[+-](\d\d):(\d\d))$
// and returns its groups' numbers (the offset's 0 for Z): year, month, day, hour, minute,
// second, offset hours and minutes. Not a regexp: an import checks a million dates.
func dateTimeFields(s string) (n [8]int, ok bool) {
	i := 0
	number := func(width int) int {
		v := 0
		for end := i + width; i < end; i++ {
			if i >= len(s) || s[i] < '0' || s[i] > '9' {
				ok = false
				return 0
			}
			v = v*10 + int(s[i]-'0')
		}
		return v
	}
	sep := func(c byte) {
		if i < len(s) && s[i] == c {
			i++
		} else {
			ok = false
		}
	}
	ok = true
	n[0] = number(4)
	sep('-')
	n[1] = number(2)
	sep('-')
	n[2] = number(2)
	sep('T')
	n[3] = number(2)
	sep(':')
	n[4] = number(2)
	sep(':')
	n[5] = number(2)
	if ok && i < len(s) && s[i] == '.' {
		i++
		if number(1); ok {
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		}
	}
	switch {
	case !ok || i >= len(s):
		return n, false
	case s[i] == 'Z':
		i++
	case s[i] == '+' || s[i] == '-':
		i++
		n[6] = number(2)
		sep(':')
		n[7] = number(2)
	default:
		return n, false
	}
	return n, ok && i == len(s)
}

func daysIn(year int, month time.Month) int {
	return time.Date(year, month+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
