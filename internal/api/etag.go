package api

import "strings"

// etagMatches is the weak comparison of If-None-Match (RFC 9110, 13.1.2): "*" or any listed
// tag whose opaque part equals that of current.
func etagMatches(ifNoneMatch, current string) bool {
	want := strings.TrimPrefix(current, "W/")
	for _, t := range strings.Split(ifNoneMatch, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == want {
			return true
		}
	}
	return false
}
