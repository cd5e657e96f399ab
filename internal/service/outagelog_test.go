package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/store"
)

// TestOutageLogWarnsOnEnteringEveryMinuteAndOnRecovery: four failures a second for three
// minutes are four lines, not 720.
func TestOutageLogWarnsOnEnteringEveryMinuteAndOnRecovery(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
	o := newOutageLog(slog.New(slog.NewJSONHandler(&buf, nil)), func() time.Time { return now })
	down := fmt.Errorf("%w: redis: connection refused", store.ErrUnavailable)

	o.observe(nil) // no outage yet: nothing to say
	for range 3 * 60 * 4 {
		o.observe(down)
		o.observe(errors.New("a bug, not an outage"))
		now = now.Add(250 * time.Millisecond)
	}
	o.observe(nil)
	o.observe(nil)

	var got []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec struct{ Level, Msg string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got = append(got, rec.Level+" "+rec.Msg)
	}
	want := []string{
		"WARN store unavailable: answering 503 until it answers again",
		"WARN store still unavailable",
		"WARN store still unavailable",
		"INFO store answers again",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines:\n%s\nwant:\n%s\nlog:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), buf.String())
	}
	if !strings.Contains(buf.String(), `"failures_since_last_warning":240`) || !strings.Contains(buf.String(), `"down_for":"3m0s"`) {
		t.Fatalf("the reminders and the recovery do not say how long and how often:\n%s", buf.String())
	}
}
