package redistest

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Snippet is the Lua script docs/redis-layout.md gives other systems under the line
// `<!-- snippet: name -->`, and the keys of its `-- KEYS:` line for the deployment of prefix:
// a test that runs it runs the page's text, so the two cannot part.
func Snippet(tb testing.TB, name, prefix string) (src string, keys []string) {
	tb.Helper()
	_, here, _, _ := runtime.Caller(0)
	doc, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "docs", "redis-layout.md"))
	if err != nil {
		tb.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "<!-- snippet: "+name+" -->\n")
	fence, rest, ok2 := strings.Cut(rest, "```lua\n")
	body, _, ok3 := strings.Cut(rest, "```")
	indent := strings.TrimRight(fence, " ") == "" // only the indent before the fence
	if !ok || !ok2 || !ok3 || !indent {
		tb.Fatalf("docs/redis-layout.md: no lua block after <!-- snippet: %s -->", name)
	}
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimPrefix(l, fence)
		if k, ok := strings.CutPrefix(l, "-- KEYS: "); ok {
			keys = strings.Fields(strings.ReplaceAll(k, "{P:", "{"+prefix+":"))
		}
		lines = append(lines, l)
	}
	if keys == nil {
		tb.Fatalf("docs/redis-layout.md: snippet %s has no -- KEYS: line", name)
	}
	return strings.Join(lines, "\n"), keys
}
