package order

import (
	"fmt"
	"time"
)

// DateTimeShape is what an RFC 3339 date-time must look like, said to a client whose value
// does not.
const DateTimeShape = "must be an RFC 3339 date-time, such as 2026-11-16T00:00:00Z"

// DateTimeFault says why s is not a date-time this service reads (a shipDate in a data file,
// a date filter of v2), or "" when it is one: RFC 3339's date-time exactly, with upper-case T
// and Z, a day that exists, and no leap second (a time.Time cannot hold one). kin-openapi's
// format check lets through second 60, days 29 to 31 of any month and any two-digit offset;
// time.Parse reads +24:00 and +23:60.
func DateTimeFault(s string) string {
	// The fixed part: "2006-01-02T15:04:05", 19 bytes.
	if len(s) < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return DateTimeShape
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	second, ok6 := digits(s[17:19])
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
		return DateTimeShape
	}
	rest := s[19:]
	if rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 1 {
			return DateTimeShape // a point without digits
		}
		rest = rest[n:]
	}
	switch {
	case rest == "Z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := digits(rest[1:3])
		om, ok2 := digits(rest[4:6])
		if !ok1 || !ok2 {
			return DateTimeShape
		}
		if oh > 23 || om > 59 {
			return fmt.Sprintf("offset %s is out of range: hours 00 to 23, minutes 00 to 59", rest)
		}
	default:
		return DateTimeShape
	}
	switch {
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

// digits reads s, of ASCII digits only (no sign, no space), as a number.
func digits(s string) (int, bool) {
	n := 0
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// daysIn is the number of days of the month in year, by the Gregorian calendar.
func daysIn(year int, month time.Month) int {
	return time.Date(year, month+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
