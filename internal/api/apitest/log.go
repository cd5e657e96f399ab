package apitest

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Log collects the JSON lines of a log written by concurrent requests, to read back.
type Log struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String is everything written so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Records returns every line written so far, decoded; a line that is not JSON fails the test.
func (l *Log) Records(tb testing.TB) []map[string]any {
	tb.Helper()
	var out []map[string]any
	for line := range strings.Lines(l.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			tb.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// At returns the records of level (DEBUG, INFO, WARN, ERROR).
func (l *Log) At(tb testing.TB, level string) []map[string]any {
	tb.Helper()
	return slices.DeleteFunc(l.Records(tb), func(rec map[string]any) bool { return rec["level"] != level })
}
