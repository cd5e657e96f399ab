package api

import (
	"bytes"
	"hash/crc32"
	"math"
	"net/http"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/internal/order"
)

// A walk gzips many pages, so speed decides; the list is gzipped once a version (docs/benchmarks.md).
const (
	pageLevel     = gzip.BestSpeed
	listLevel     = 3
	minGzipLength = 256 // the shortest body worth compressing: error bodies are shorter
)

// encoded is a whole answer, made once, with the headers only it writes.
type encoded struct {
	body        []byte
	contentType string
	etag        string          // none for a file or a page of events
	gzipped     func() []byte   // made by the first request that accepts gzip; nil: always plain
	eventID     string          // Orders-Event-Id: the position in the log it was read at
	link        string          // the next page (RFC 8288), or ""
	snap        *order.Snapshot // the list's, for listCache
	secret      *[]byte         // the page-token secret a page's tokens verify under; nil when it has none
}

func newEncoded(body []byte, level int) *encoded {
	return &encoded{body: body, contentType: echo.MIMEApplicationJSON, etag: etagOf(body), gzipped: gzipOnce(body, level)}
}

// newFile is a document or a file of /docs: no ETag.
func newFile(body []byte, contentType string) *encoded {
	return &encoded{body: body, contentType: contentType, gzipped: gzipOnce(body, pageLevel)}
}

// answer is an encoded body as a generated response, which would encode it again.
type answer struct {
	*encoded
	r *http.Request
}

func (a answer) VisitListOrdersResponse(w http.ResponseWriter) error         { return a.write(w, a.r) }
func (a answer) VisitFindOrdersResponse(w http.ResponseWriter) error         { return a.write(w, a.r) }
func (a answer) VisitListEventsResponse(w http.ResponseWriter) error         { return a.write(w, a.r) }
func (a answer) VisitGetOpenAPIDocumentResponse(w http.ResponseWriter) error { return a.write(w, a.r) }

// write answers r with e: 304 when If-None-Match names e's tag, else e's body, gzipped if it gains.
func (e *encoded) write(w http.ResponseWriter, r *http.Request) error {
	h := w.Header()
	if e.eventID != "" {
		h.Set("Orders-Event-Id", e.eventID)
	}
	if e.etag != "" {
		h.Set("ETag", e.etag)
		if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, e.etag) {
			w.WriteHeader(http.StatusNotModified)
			return nil
		}
	}
	if e.link != "" {
		h.Set("Link", e.link)
	}
	body := e.body
	if e.gzipped != nil && len(body) >= minGzipLength && acceptsGzip(r.Header) {
		body = e.gzipped()
		h.Set(echo.HeaderContentEncoding, "gzip")
	}
	h.Set(echo.HeaderContentType, e.contentType)
	// The body is whole: without a length, one over net/http's 2 KB buffer is sent chunked.
	h.Set(echo.HeaderContentLength, strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(body)
	return err
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

// settled returns body, from 32 MiB on after giving back the garbage of its making: with GOGC
// at 400 a million orders read would stay resident until the next collection (bench/million.sh).
func settled(body []byte) []byte {
	if len(body) >= 32<<20 {
		debug.FreeOSMemory()
	}
	return body
}

// acceptsGzip reports whether Accept-Encoding accepts gzip (RFC 9110 §12.5.3): "gzip", "x-gzip"
// or else "*", weighted above 0 and not below "identity". (echo's gzip took "gzip;q=0" for a yes.)
func acceptsGzip(h http.Header) bool {
	v := h.Values(echo.HeaderAcceptEncoding)
	gz := weight(v, func(c string) bool { return strings.EqualFold(c, "gzip") || strings.EqualFold(c, "x-gzip") })
	star := weight(v, func(c string) bool { return c == "*" })
	identity := weight(v, func(c string) bool { return strings.EqualFold(c, "identity") })
	if gz < 0 {
		gz = star
	}
	if identity < 0 {
		identity = star
	}
	return gz > 0 && gz >= identity
}

// weight is the greatest weight, in thousandths, the header's lines give an item that is; -1: none.
func weight(lines []string, is func(string) bool) int {
	w := -1
	for _, line := range lines {
		for item := range strings.SplitSeq(line, ",") {
			if name, params, _ := strings.Cut(item, ";"); is(strings.TrimSpace(name)) {
				w = max(w, qvalue(params))
			}
		}
	}
	return w
}

// qvalue is the weight in params, in thousandths: 1000 without a q, -1 for no qvalue.
func qvalue(params string) int {
	for p := range strings.SplitSeq(params, ";") {
		if name, v, _ := strings.Cut(p, "="); strings.EqualFold(strings.TrimSpace(name), "q") {
			if v = strings.TrimSpace(v); !qvalueSyntax.MatchString(v) {
				return -1
			}
			q, _ := strconv.ParseFloat(v, 64)
			return int(math.Round(q * 1000))
		}
	}
	return 1000
}

var qvalueSyntax = regexp.MustCompile(`^(0(\.[0-9]{0,3})?|1(\.0{0,3})?)$`)

// etagOf is a weak tag of body, plain or gzipped: two hardware CRCs, alike on every instance.
func etagOf(body []byte) string {
	sum := uint64(crc32.Checksum(body, castagnoli))<<32 | uint64(crc32.ChecksumIEEE(body))
	return `W/"` + strconv.FormatUint(sum, 36) + `"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// etagMatches is If-None-Match's weak comparison (RFC 9110 §13.1.2), read quote by quote: an
// opaque-tag may hold ',' and '*'.
func etagMatches(ifNoneMatch, current string) bool {
	v := strings.Trim(ifNoneMatch, " \t")
	if v == "*" {
		return true
	}
	want := strings.TrimPrefix(current, "W/")
	for {
		v = strings.TrimPrefix(strings.TrimLeft(v, ", \t"), "W/")
		n := strings.IndexByte(v[min(1, len(v)):], '"') + 2 // the tag's length, both quotes included
		if !strings.HasPrefix(v, `"`) || n < 2 {
			return false // the end, or no entity-tag (the contract lets none through)
		}
		if v[:n] == want {
			return true
		}
		v = v[n:]
	}
}
