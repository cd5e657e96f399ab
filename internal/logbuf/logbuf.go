// Package logbuf buffers log output: one write system call per access line costs a busy
// server more than the rest of its logging; a buffer flushed every interval costs a few.
package logbuf

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// Writer is an io.Writer safe for concurrent use that buffers writes to w and flushes them
// every interval, when the buffer fills, and on Close. A line is never split between flushes,
// since slog writes each record with one Write.
type Writer struct {
	mu   sync.Mutex
	buf  *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

// New starts a Writer flushing to w every interval.
func New(w io.Writer, interval time.Duration) *Writer {
	lw := &Writer{buf: bufio.NewWriterSize(w, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(lw.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-lw.stop:
				return
			case <-t.C:
				lw.Flush()
			}
		}
	}()
	return lw
}

// Write buffers p.
func (lw *Writer) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.buf.Write(p)
}

// Flush writes what is buffered.
func (lw *Writer) Flush() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.buf.Flush()
}

// Close stops the flushing and writes what is left.
func (lw *Writer) Close() error {
	close(lw.stop)
	<-lw.done
	return lw.Flush()
}
