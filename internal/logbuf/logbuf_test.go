package logbuf

import (
	"bytes"
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
