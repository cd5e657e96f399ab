package api

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/labstack/echo/v4"
)

// This file is the one place that decides compression: which requests accept gzip
// (acceptsGzip), which answers are compressed as they are written (compress, gzipWriter),
// and the levels. The list is compressed once per version of the orders instead (list.go's
// listCache.gzipped), and written as it is through the same writer.
//
// klauspost/compress's gzip, not compress/gzip: at level 1 it is 1.5 to 2 times as fast as
// compress/gzip's BestSpeed, and smaller. BenchmarkGzip (go1.26, 2 cores, a shared machine,
// medians of 3; the orders as appendOrders writes them; % is the compressed size):
//
//	                          compress/gzip                  klauspost/compress/gzip
//	                          BestSpeed      Default (echo)  1 (pageLevel)  3 (listLevel)  5
//	page of 100, pooled writer  57 µs 16.3%   167 µs 12.5%    30 µs 14.2%
//	list of 10,000             5.5 ms 12.4%    17 ms  8.8%   3.8 ms 11.9%   4.9 ms 10.5%   7.3 ms 9.5%
//	list of 1,000,000          502 ms 12.2%   1.3 s   8.5%   270 ms 11.5%   349 ms 10.3%   459 ms 9.3%
//
// A page is compressed on every request: speed decides, level 1. The list is compressed once
// per version and then sent to every gzip reader, so size counts, but each change of the
// orders costs it again and the first gzip readers after one wait for it: level 3, a tenth
// smaller than level 1 for a third more time (at a million orders, 80 ms more, after the
// plain encoding's 171 ms); level 5 saves another tenth for another third.
const (
	pageLevel = gzip.BestSpeed
	listLevel = 3
	// minGzipLength is the shortest body worth compressing: error bodies are shorter.
	minGzipLength = 256
)

// acceptsGzip reports whether Accept-Encoding, all its lines taken as one list, accepts gzip
// (RFC 9110, 12.5.3): "gzip" (or its alias "x-gzip"), else "*", with a weight above 0 and
// not below the weight given to "identity", when one is given (by name or by "*"); on a tie
// gzip is sent. No header, or an empty one, asks for no coding. A weight that is not a qvalue
// makes its element count for nothing: the body is then sent plain, which is always safe.
func acceptsGzip(h http.Header) bool {
	gz, star, identity := -1, -1, -1 // weights in thousandths; -1: not listed
	for _, line := range h.Values(echo.HeaderAcceptEncoding) {
		for elem := range strings.SplitSeq(line, ",") {
			coding, params, _ := strings.Cut(elem, ";")
			q := qvalue(params)
			switch coding = strings.TrimSpace(coding); {
			case strings.EqualFold(coding, "gzip"), strings.EqualFold(coding, "x-gzip"):
				gz = max(gz, q)
			case coding == "*":
				star = max(star, q)
			case strings.EqualFold(coding, "identity"):
				identity = max(identity, q)
			}
		}
	}
	if gz < 0 {
		gz = star
	}
	if identity < 0 {
		identity = star
	}
	return gz > 0 && gz >= identity
}

// qvalue is the weight of an element's parameters in thousandths: 1000 without a q, -1 when
// q is no qvalue ("0", "0.5", "1.000"; RFC 9110, 12.4.2).
func qvalue(params string) int {
	for p := range strings.SplitSeq(params, ";") {
		name, v, _ := strings.Cut(p, "=")
		if !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		whole, frac, _ := strings.Cut(strings.TrimSpace(v), ".")
		if (whole != "0" && whole != "1") || len(frac) > 3 {
			return -1
		}
		n := 0
		for i := range 3 {
			n *= 10
			if i < len(frac) {
				if frac[i] < '0' || frac[i] > '9' {
					return -1
				}
				n += int(frac[i] - '0')
			}
		}
		switch {
		case whole == "0":
			return n
		case n == 0:
			return 1000
		}
		return -1 // above 1
	}
	return 1000
}

// compress answers a request that accepts gzip through a gzipWriter, and tells every answer
// but /metrics' (which compresses itself) that it varies with Accept-Encoding.
func compress(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Path() == "/metrics" {
			return next(c)
		}
		res := c.Response()
		h := res.Header()
		if _, ok := h[echo.HeaderVary]; ok {
			h.Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
		} else {
			h[echo.HeaderVary] = varyAcceptEncoding
		}
		if !acceptsGzip(c.Request().Header) {
			return next(c)
		}
		w := &gzipWriter{ResponseWriter: res.Writer}
		res.Writer = w
		// The writer under it is put back whatever happens: an error answer is written
		// after this returns, by observe, plain (the error bodies are short).
		defer func() { res.Writer = w.ResponseWriter }()
		err := next(c)
		w.finish()
		return err
	}
}

// varyAcceptEncoding is the Vary of every answer but /metrics' (cap == len: see writeHeaders).
var varyAcceptEncoding = []string{echo.HeaderAcceptEncoding}

// gzipWriter compresses a body of at least minGzipLength bytes, at pageLevel, as it is
// written; a shorter one, or none (a 304, a HEAD's), is sent as it is. An answer that sets its
// own Content-Encoding (the list, gzipped once per version) is passed through untouched.
type gzipWriter struct {
	http.ResponseWriter
	status  int    // the status to write, once it is known whether the body is compressed
	pending []byte // the first bytes of a body, until there are minGzipLength of them
	z       *gzip.Writer
	through bool // writing as it is: the body is already encoded, or short
}

// WriteHeader keeps the status until the body says whether it is compressed.
func (w *gzipWriter) WriteHeader(status int) {
	if w.through || w.z != nil || w.status != 0 {
		return // http.ResponseWriter ignores a second status too
	}
	if _, ok := w.Header()[echo.HeaderContentEncoding]; ok {
		w.through = true
		w.ResponseWriter.WriteHeader(status)
		return
	}
	w.status = status
}

func (w *gzipWriter) Write(b []byte) (int, error) {
	if w.status == 0 && !w.through && w.z == nil {
		w.WriteHeader(http.StatusOK)
	}
	switch {
	case w.through:
		return w.ResponseWriter.Write(b)
	case w.z != nil:
		return w.z.Write(b)
	case len(w.pending)+len(b) < minGzipLength:
		w.pending = append(w.pending, b...)
		return len(b), nil
	}
	w.startGzip(b)
	pending := w.pending
	w.pending = nil
	if _, err := w.z.Write(pending); err != nil {
		return 0, err
	}
	return w.z.Write(b)
}

// startGzip writes the headers of a compressed body, whose first bytes are in w.pending or b.
func (w *gzipWriter) startGzip(b []byte) {
	h := w.Header()
	if _, ok := h[echo.HeaderContentType]; !ok { // else net/http would sniff the gzip bytes
		sniff := b
		if len(w.pending) > 0 {
			sniff = w.pending
		}
		h[echo.HeaderContentType] = []string{http.DetectContentType(sniff)}
	}
	delete(h, echo.HeaderContentLength) // the plain length
	h[echo.HeaderContentEncoding] = gzipEncoding
	w.ResponseWriter.WriteHeader(w.status)
	w.z = pageWriters.Get().(*gzip.Writer)
	w.z.Reset(w.ResponseWriter)
}

// Flush compresses what is pending (the length of the rest is unknown) and sends it.
func (w *gzipWriter) Flush() {
	if !w.through && w.z == nil {
		if w.status == 0 {
			w.status = http.StatusOK
		}
		w.startGzip(nil)
		w.z.Write(w.pending)
		w.pending = nil
	}
	if w.z != nil {
		w.z.Flush()
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

// finish ends the answer: the gzip stream, or the short body and status kept until now.
func (w *gzipWriter) finish() {
	switch {
	case w.z != nil:
		w.z.Close()
		w.z.Reset(io.Discard)
		pageWriters.Put(w.z)
		w.z = nil
	case w.status != 0:
		w.through = true
		w.ResponseWriter.WriteHeader(w.status)
		if len(w.pending) > 0 {
			w.ResponseWriter.Write(w.pending)
		}
	}
}

// Unwrap is the writer under it, for http.ResponseController and for gzipAccepted.
func (w *gzipWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// gzipAccepted reports whether w writes to a request that accepts gzip: whether compress put
// its writer under it.
func gzipAccepted(w http.ResponseWriter) bool {
	for w != nil {
		if _, ok := w.(*gzipWriter); ok {
			return true
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return false
		}
		w = u.Unwrap()
	}
	return false
}

// pageWriters are the gzip writers of compress, at pageLevel.
var pageWriters = sync.Pool{New: func() any {
	z, _ := gzip.NewWriterLevel(io.Discard, pageLevel)
	return z
}}

// gzipBytes is b compressed at level, for a body compressed once and sent many times.
func gzipBytes(b []byte, level int) []byte {
	var out bytes.Buffer
	out.Grow(len(b)/8 + 64)
	z, _ := gzip.NewWriterLevel(&out, level)
	z.Write(b) // a Buffer's writes cannot fail
	z.Close()
	return out.Bytes()
}

// gzipEncoding is the Content-Encoding value of a gzipped body (cap == len: see writeHeaders).
var gzipEncoding = []string{"gzip"}
