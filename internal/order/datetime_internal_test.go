package order

import (
	"regexp"
	"strconv"
	"testing"
)

// dateTimeRE is the pattern dateTimeFields matches by hand.
var dateTimeRE = regexp.MustCompile(`^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.\d+)?(?:Z|[+-](\d\d):(\d\d))$`)

// FuzzDateTimeFields: dateTimeFields matches what the regexp it replaced matches, with the same groups.
func FuzzDateTimeFields(f *testing.F) {
	for _, s := range []string{
		"2026-11-05T13:00:00Z", "2026-11-05T13:00:00.123456789+02:00", "2026-11-05T13:00:00.Z", "2026-11-05T13:00:00-23:59",
		"2026-11-05t13:00:00Z", "2026-11-05T13:00:00z", "2026-11-05T13:00:00+0200", "2026-11-05T13:00:00", "2026-11-05",
		"12026-11-05T13:00:00Z", "2026-11-05T13:00:00Z ", "2026-1-05T13:00:00Z", "2026-11-05T13:00:00.5", "", "٢٠٢٦-11-05T13:00:00Z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := dateTimeFields(s)
		m := dateTimeRE.FindStringSubmatch(s)
		if ok != (m != nil) {
			t.Fatalf("%q: matched %v, the regexp %v", s, ok, m != nil)
		}
		for i := 0; ok && i < len(n); i++ {
			if want, _ := strconv.Atoi(m[i+1]); n[i] != want {
				t.Fatalf("%q: group %d is %d, want %d", s, i+1, n[i], want)
			}
		}
	})
}
