package api

import (
	"bytes"
	stdgzip "compress/gzip"
	"io"
	"sync"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// BenchmarkGzip measures the compressors and levels compress.go chooses from (the figures
// are there): a page of 100 orders (version 2's default), compressed per request by a pooled
// writer.
func BenchmarkGzip(b *testing.B) {
	page := appendPage(nil, benchOrders(100), "")
	type resetter interface {
		io.WriteCloser
		Reset(io.Writer)
	}
	for _, c := range []struct {
		name string
		new  func() resetter
	}{
		// echo's gzip middleware: a pooled compress/gzip writer at its default level.
		{"std/-1", func() resetter { z, _ := stdgzip.NewWriterLevel(io.Discard, stdgzip.DefaultCompression); return z }},
		{"std/1", func() resetter { z, _ := stdgzip.NewWriterLevel(io.Discard, stdgzip.BestSpeed); return z }},
		{"klauspost/1", func() resetter { z, _ := gzip.NewWriterLevel(io.Discard, 1); return z }},
	} {
		b.Run("page/100/"+c.name, func(b *testing.B) {
			pool := sync.Pool{New: func() any { return c.new() }}
			var out bytes.Buffer
			for b.Loop() {
				out.Reset()
				z := pool.Get().(resetter)
				z.Reset(&out)
				z.Write(page)
				z.Close()
				pool.Put(z)
			}
			b.ReportMetric(100*float64(out.Len())/float64(len(page)), "%size")
		})
	}
}
