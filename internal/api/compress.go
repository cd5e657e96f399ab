package api

import (
	"bytes"
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

// compress.go decides compression: which requests accept gzip, which answers are gzipped as
// they are written, and the levels (klauspost/compress: faster and smaller than compress/gzip;
// the figures are in bench/notes.md). A page is gzipped once per page found, and a walk finds
// many: speed decides. The list once per version, read by many: size counts more.
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
// q is no qvalue (RFC 9110, 12.4.2).
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

// compress answers a request that accepts gzip through a gzipWriter, and tells every answer
// but /metrics' (which compresses itself) that it varies with Accept-Encoding.
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
		// Put back whatever happens: observe writes an error answer after this returns, plain.
		defer func() { res.Writer = w.ResponseWriter }()
		err := next(c)
		w.finish()
		return err
	}
}

// gzipWriter compresses a body of at least minGzipLength bytes, at pageLevel, as it is
// written; a shorter one, or none (a 304, a HEAD's), is sent as it is. An answer that sets its
// own Content-Encoding (an encoded list or page) is passed through untouched.
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
	if err := w.startGzip(b); err != nil {
		return 0, err
	}
	return w.z.Write(b)
}

// startGzip writes the headers of a compressed body, whose first bytes are in w.pending or b,
// and compresses the pending ones.
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
	if !w.through && w.z == nil {
		if w.status == 0 {
			w.status = http.StatusOK
		}
		w.startGzip(nil)
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
	z, _ := gzip.NewWriterLevel(&out, level)
	z.Write(b) // a Buffer's writes cannot fail
	z.Close()
	return out.Bytes()
}
