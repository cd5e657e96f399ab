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
// every interval, when the next write would not fit, and on Close. slog writes a record with
// one Write, so a line is never split between two flushes.
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	buf  *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

// New starts a Writer flushing to w every interval.
func New(w io.Writer, interval time.Duration) *Writer {
	lw := &Writer{w: w, buf: bufio.NewWriterSize(w, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
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

// Write buffers p, flushing first when p would not fit. A failed write drops the buffer, or
// bufio would refuse every later write; slog drops its handler's errors, so those lines are lost.
func (lw *Writer) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if len(p) > lw.buf.Available() && lw.buf.Buffered() > 0 && lw.buf.Flush() != nil {
		lw.buf.Reset(lw.w)
	}
	n, err := lw.buf.Write(p)
	if err != nil {
		lw.buf.Reset(lw.w)
	}
	return n, err
}

// Flush writes what is buffered; a failed write drops it, as in Write.
func (lw *Writer) Flush() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	err := lw.buf.Flush()
	if err != nil {
		lw.buf.Reset(lw.w)
	}
	return err
}

// Close stops the flushing and writes what is left.
func (lw *Writer) Close() error {
	close(lw.stop)
	<-lw.done
	return lw.Flush()
}
