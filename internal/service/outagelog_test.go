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

	"github.com/petstore/orderd/internal/order"
)

// TestOutageLogWarnsOnEnteringEveryMinuteAndOnRecovery: four failures a second for three
// minutes are four lines, not 720.
func TestOutageLogWarnsOnEnteringEveryMinuteAndOnRecovery(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
	o := &storeLog{log: slog.New(slog.NewJSONHandler(&buf, nil)), now: func() time.Time { return now }, last: map[string]time.Time{}, held: map[string]int64{}}
	down := fmt.Errorf("%w: redis: connection refused", order.ErrUnavailable)

	o.outage(nil) // no outage yet: nothing to say
	for range 3 * 60 * 4 {
		o.outage(down)
		o.outage(errors.New("a bug, not an outage"))
		now = now.Add(250 * time.Millisecond)
	}
	o.outage(nil)
	o.outage(nil)

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

// TestFaultLogCountsEveryFaultAndLogsALineAMinutePerKind: four corrupt reads and four full
// writes a second for two minutes are eight lines and every one counted; a lasting fault is
// an error, a full disk a warning.
func TestFaultLogCountsEveryFaultAndLogsALineAMinutePerKind(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	counted := map[string]int{}
	l := &storeLog{log: slog.New(slog.NewJSONHandler(&buf, nil)), now: func() time.Time { return now }, count: func(kind string) { counted[kind]++ },
		last: map[string]time.Time{}, held: map[string]int64{}}
	corrupt := &order.Fault{Kind: "corrupt", Lasting: true, Public: "the database file is corrupt",
		Err: fmt.Errorf("%w: sqlite /data/orderd.db: database disk image is malformed (11)", order.ErrCorrupt)}
	full := &order.Fault{Kind: "full", Public: "the disk of the database file is full",
		Err: fmt.Errorf("%w: sqlite /data/orderd.db: database or disk is full (13)", order.ErrUnavailable)}
	for range 2 * 60 * 4 {
		l.fault(corrupt)
		l.fault(full)
		now = now.Add(250 * time.Millisecond)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec struct {
			Level, Msg, Kind, Error string
			Held                    int64 `json:"repeats_since_last_line"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if !strings.Contains(rec.Error, "/data/orderd.db") {
			t.Errorf("%q does not name the file", line)
		}
		got = append(got, fmt.Sprintf("%s %s %d", rec.Level, rec.Kind, rec.Held))
	}
	want := []string{"ERROR corrupt 0", "WARN full 0", "ERROR corrupt 239", "WARN full 239"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if counted["corrupt"] != 480 || counted["full"] != 480 {
		t.Errorf("counted %v; want 480 of each", counted)
	}
}
