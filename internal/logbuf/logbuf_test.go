package logbuf

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestWriterFlushesOnTimeAndOnClose(t *testing.T) {
	var out syncBuffer
	w := New(&out, 20*time.Millisecond)
	w.Write([]byte("one\n"))
	if out.String() != "" {
		t.Fatal("written before the interval")
	}
	deadline := time.Now().Add(2 * time.Second)
	for out.String() != "one\n" {
		if time.Now().After(deadline) {
			t.Fatal("not flushed within the interval")
		}
		time.Sleep(5 * time.Millisecond)
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() { defer wg.Done(); w.Write([]byte("line of a record\n")) }()
	}
	wg.Wait()
	w.Close()
	if got := strings.Count(out.String(), "line of a record\n"); got != 50 {
		t.Fatalf("%d whole lines after Close, want 50", got)
	}
}

// writes records each write to it, and fails the first failures of them.
type writes struct {
	got      [][]byte
	failures int
}

func (w *writes) Write(p []byte) (int, error) {
	if w.failures > 0 {
		w.failures--
		return 0, errors.New("stderr is gone")
	}
	w.got = append(w.got, bytes.Clone(p))
	return len(p), nil
}

// TestLinesAreNeverSplit: lines that together overflow the buffer, and a line longer than
// the buffer, each reach the output whole: every write ends with a newline.
func TestLinesAreNeverSplit(t *testing.T) {
	out := &writes{}
	w := New(out, time.Hour)
	long := func(n int, c string) []byte { return []byte(strings.Repeat(c, n-1) + "\n") }
	for _, line := range [][]byte{long(40<<10, "a"), long(40<<10, "b"), long(100<<10, "c"), long(10, "d")} {
		if n, err := w.Write(line); n != len(line) || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	w.Close()
	var total int
	for i, p := range out.got {
		if p[len(p)-1] != '\n' {
			t.Fatalf("write %d of %d ends inside a line (%d bytes)", i+1, len(out.got), len(p))
		}
		total += len(p)
	}
	if want := 40<<10 + 40<<10 + 100<<10 + 10; total != want {
		t.Fatalf("%d bytes written, want %d", total, want)
	}
}

// TestAFailedFlushDoesNotSilenceTheLog: the lines a failed write held are lost, and the
// lines after it are written.
func TestAFailedFlushDoesNotSilenceTheLog(t *testing.T) {
	out := &writes{failures: 1}
	w := New(out, time.Hour)
	w.Write([]byte("lost\n"))
	if err := w.Flush(); err == nil {
		t.Fatal("a failed write was not reported by Flush")
	}
	w.Write([]byte("after\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(out.got) != 1 || string(out.got[0]) != "after\n" {
		t.Fatalf("written: %q; want the line after the failure", out.got)
	}
}
