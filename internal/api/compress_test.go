package api

import (
	"bytes"
	stdgzip "compress/gzip"
	"io"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// TestListIsGzippedOnce: the requests of one version that ask for gzip at once share one
// compression, and it is the plain body's.
func TestListIsGzippedOnce(t *testing.T) {
	e := newEncoded(appendOrders(nil, slices.Values(benchOrders(1000))), listLevel)
	got := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = e.gzipped() })
	}
	wg.Wait()
	for _, z := range got[1:] {
		if &z[0] != &got[0][0] {
			t.Fatal("the list was compressed more than once")
		}
	}
	zr, err := stdgzip.NewReader(bytes.NewReader(got[0]))
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := io.ReadAll(zr); err != nil || !bytes.Equal(plain, e.body) {
		t.Fatalf("not the plain body gzipped (%v)", err)
	}
}

// BenchmarkGzip measures the compressors and levels orders.go chooses from (the figures
// are in docs/benchmarks.md): the list, compressed once per version, at 10,000 and 1,000,000 orders; a page
// of 100 orders (version 2's default), compressed once per page found.
func BenchmarkGzip(b *testing.B) {
	type compressor struct {
		name  string
		level int
		new   func(w io.Writer, level int) (io.WriteCloser, error)
	}
	std := func(w io.Writer, level int) (io.WriteCloser, error) { return stdgzip.NewWriterLevel(w, level) }
	klauspost := func(w io.Writer, level int) (io.WriteCloser, error) { return gzip.NewWriterLevel(w, level) }
	for _, n := range []int{10_000, 1_000_000} {
		plain := appendOrders(nil, slices.Values(benchOrders(n)))
		for _, c := range []compressor{
			{"std", stdgzip.BestSpeed, std},
			{"std", stdgzip.DefaultCompression, std},
			{"klauspost", 1, klauspost},
			{"klauspost", 3, klauspost},
			{"klauspost", 5, klauspost},
		} {
			b.Run("list/"+strconv.Itoa(n)+"/"+c.name+"/"+strconv.Itoa(c.level), func(b *testing.B) {
				var out bytes.Buffer
				for b.Loop() {
					out.Reset()
					z, _ := c.new(&out, c.level)
					z.Write(plain)
					z.Close()
				}
				b.ReportMetric(100*float64(out.Len())/float64(len(plain)), "%size")
			})
		}
	}
	page := appendOrders(nil, slices.Values(benchOrders(100))) // a page but for its wrapper
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
