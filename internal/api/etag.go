package api

import (
	"hash/fnv"
	"strconv"
	"strings"
)

// etagOf is a weak tag of the encoded list: weak, because the same list is sent plain or
// gzipped, and both are the same content.
func etagOf(body []byte) string {
	h := fnv.New64a()
	h.Write(body)
	return `W/"` + strconv.FormatUint(h.Sum64(), 36) + `"`
}

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
