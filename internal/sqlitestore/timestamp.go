package sqlitestore

import (
	"fmt"
	"time"
)

// timestampLayout is how an instant is written: RFC 3339 in UTC with all nine digits of the
// nanoseconds, so that every value has the same width and text order is time order (an
// index on a ship date answers a date range).
const timestampLayout = "2006-01-02T15:04:05.000000000Z"

// timestampGlob is the CHECK that a column holds a timestamp in that layout.
const timestampGlob = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]." +
	"[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]Z"

// formatTimestamp writes t in timestampLayout; it refuses the years that do not have four
// digits, which would break the order of the text.
func formatTimestamp(t time.Time) (string, error) {
	t = t.UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		return "", fmt.Errorf("time %s is outside the years 0000 to 9999", t.Format(time.RFC3339Nano))
	}
	return t.Format(timestampLayout), nil
}

func parseTimestamp(s string) (time.Time, error) {
	return time.Parse(timestampLayout, s)
}
