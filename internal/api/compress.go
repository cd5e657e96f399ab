package api

import (
	"io"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/labstack/echo/v4"
)

// The levels (klauspost/compress; figures in bench/notes.md): a page is gzipped once per page
// found, and a walk finds many, so speed decides; the list once per version, so size counts.
const (
	pageLevel     = gzip.BestSpeed
	listLevel     = 3
	minGzipLength = 256 // the shortest body worth compressing: error bodies are shorter
)

// acceptsGzip reports whether Accept-Encoding accepts gzip (RFC 9110, 12.5.3): "gzip", "x-gzip"
// or else "*", weighted above 0 and not below "identity"; a weight that is no qvalue, nothing.
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

// qvalue is the weight in params, in thousandths: 1000 without a q, -1 for no qvalue.
func qvalue(params string) int {
	for p := range strings.SplitSeq(params, ";") {
		name, v, _ := strings.Cut(p, "=")
		if !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		v = strings.TrimSpace(v)
		if !qvalueSyntax.MatchString(v) {
			return -1
		}
		q, _ := strconv.ParseFloat(v, 64)
		return int(math.Round(q * 1000))
	}
	return 1000
}

var qvalueSyntax = regexp.MustCompile(`^(0(\.[0-9]{0,3})?|1(\.0{0,3})?)$`)

// compress answers a request that accepts gzip through a gzipWriter, and marks every answer
// but /metrics' (which compresses itself) Vary: Accept-Encoding.
func compress(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Path() == "/metrics" {
			return next(c)
		}
		res := c.Response()
		res.Header().Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
		if !acceptsGzip(c.Request().Header) {
			return next(c)
		}
		w := &gzipWriter{ResponseWriter: res.Writer}
		res.Writer = w
		// observe writes an error answer after this returns, plain.
		defer func() { res.Writer = w.ResponseWriter }()
		err := next(c)
		w.finish()
		return err
	}
}

// gzipWriter compresses a body of at least minGzipLength bytes as it is written; a shorter
// one, or one with its own Content-Encoding (the list, a page), is sent as it is.
type gzipWriter struct {
	http.ResponseWriter
	status  int    // kept until the body says whether it is compressed
	pending []byte // a body's first bytes, until there are minGzipLength
	z       *gzip.Writer
	through bool // writing as it is
}

func (w *gzipWriter) WriteHeader(status int) {
	if w.through || w.z != nil || w.status != 0 {
		return // a second status is ignored, as by http.ResponseWriter
	}
	if _, ok := w.Header()[echo.HeaderContentEncoding]; ok {
		w.through = true
		w.ResponseWriter.WriteHeader(status)
		return
	}
	w.status = status
}

func (w *gzipWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK) // unless written
	switch {
	case w.through:
		return w.ResponseWriter.Write(b)
	case w.z != nil:
		return w.z.Write(b)
	case len(w.pending)+len(b) < minGzipLength:
		w.pending = append(w.pending, b...)
		return len(b), nil
	}
	if err := w.startGzip(b); err != nil {
		return 0, err
	}
	return w.z.Write(b)
}

// startGzip writes the headers of a body that starts with w.pending (else b), and w.pending.
func (w *gzipWriter) startGzip(b []byte) error {
	h := w.Header()
	if _, ok := h[echo.HeaderContentType]; !ok { // else net/http would sniff the gzip bytes
		sniff := b
		if len(w.pending) > 0 {
			sniff = w.pending
		}
		h.Set(echo.HeaderContentType, http.DetectContentType(sniff))
	}
	h.Del(echo.HeaderContentLength) // the plain length
	h.Set(echo.HeaderContentEncoding, "gzip")
	w.ResponseWriter.WriteHeader(w.status)
	w.z = pageWriters.Get().(*gzip.Writer)
	w.z.Reset(w.ResponseWriter)
	_, err := w.z.Write(w.pending)
	w.pending = nil
	return err
}

// Flush compresses what is pending (the length of the rest is unknown) and sends it.
func (w *gzipWriter) Flush() {
	w.WriteHeader(http.StatusOK) // unless written
	if !w.through && w.z == nil {
		w.startGzip(nil)
	}
	if w.z != nil {
		w.z.Flush()
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

// finish ends the gzip stream, or writes the status and short body kept until now.
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

// gzipAccepted reports whether compress put its writer under w: the request accepts gzip.
func gzipAccepted(w http.ResponseWriter) bool {
	for {
		switch u := w.(type) {
		case *gzipWriter:
			return true
		case interface{ Unwrap() http.ResponseWriter }:
			w = u.Unwrap()
		default:
			return false
		}
	}
}

var pageWriters = sync.Pool{New: func() any {
	z, _ := gzip.NewWriterLevel(io.Discard, pageLevel)
	return z
}}
