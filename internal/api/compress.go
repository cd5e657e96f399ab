package api

import (
	"bytes"
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

// compress marks every answer but /metrics' (which compresses itself) Vary: Accept-Encoding,
// and an answer to a request that accepts gzip with gzipOK, which an encoded body reads.
func compress(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Path() == "/metrics" {
			return next(c)
		}
		res := c.Response()
		res.Header().Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
		if acceptsGzip(c.Request().Header) {
			res.Writer = gzipOK{res.Writer}
		}
		return next(c)
	}
}

// gzipOK is the writer of an answer to a request that accepts gzip.
type gzipOK struct{ http.ResponseWriter }

// Unwrap is the writer under it, for http.ResponseController.
func (w gzipOK) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// gzipAccepted reports whether compress marked w (the *echo.Response every answer is written
// to): the request accepts gzip.
func gzipAccepted(w http.ResponseWriter) bool {
	if r, ok := w.(*echo.Response); ok {
		_, gz := r.Writer.(gzipOK)
		return gz
	}
	return false
}

// gzipOnce is body gzipped at level by the first request that asks for it.
func gzipOnce(body []byte, level int) func() []byte {
	return sync.OnceValue(func() []byte {
		var out bytes.Buffer
		z, _ := gzip.NewWriterLevel(&out, level)
		z.Write(body) // a Buffer's writes cannot fail
		z.Close()
		return settled(out.Bytes())
	})
}

// newFile is a document or a file of /docs as encoded: no ETag.
func newFile(body []byte) *encoded { return &encoded{body: body, gzipped: gzipOnce(body, pageLevel)} }

// File serves a file of /docs (docs.Router).
func (r routes) File(path, contentType string, body []byte, m ...echo.MiddlewareFunc) {
	e := newFile(body)
	r.GET(path, func(c echo.Context) error { return e.write(c.Response(), contentType) }, m...)
}
