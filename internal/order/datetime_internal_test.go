package order

import (
	"regexp"
	"testing"
)

// dateTimeRE is the shape DateTimeFault reads by hand.
var dateTimeRE = regexp.MustCompile(`^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.\d+)?(?:Z|[+-](\d\d):(\d\d))$`)

// FuzzDateTimeShape: DateTimeFault finds the shape wrong exactly when the regexp it replaced
// does not match (the fields' values are api's TestDateTimeFault's).
func FuzzDateTimeShape(f *testing.F) {
	for _, s := range []string{
		"2026-11-05T13:00:00Z", "2026-11-05T13:00:00.123456789+02:00", "2026-11-05T13:00:00.Z", "2026-11-05T13:00:00-23:59",
		"2026-11-05t13:00:00Z", "2026-11-05T13:00:00z", "2026-11-05T13:00:00+0200", "2026-11-05T13:00:00", "2026-11-05",
		"12026-11-05T13:00:00Z", "2026-11-05T13:00:00Z ", "2026-1-05T13:00:00Z", "2026-11-05T13:00:00.5", "", "٢٠٢٦-11-05T13:00:00Z",
		"2026-11-05T13:00:00+02:000", "2026-11-05T13:00:00.5Z5",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if wrong, want := DateTimeFault(s) == DateTimeShape, !dateTimeRE.MatchString(s); wrong != want {
			t.Fatalf("%q: shape wrong %v, the regexp says %v", s, wrong, want)
		}
	})
}
