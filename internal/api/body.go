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
)

// The levels (klauspost/compress; figures in bench/notes.md): a page is gzipped once per page
// found, and a walk finds many, so speed decides; the list once per version, so size counts.
const (
	pageLevel     = gzip.BestSpeed
	listLevel     = 3
	minGzipLength = 256 // the shortest body worth compressing: error bodies are shorter
)

// encoded is a body made once and sent many times (the list, a page, a document, a file).
type encoded struct {
	body    []byte
	etag    string        // none for a file
	gzipped func() []byte // made by the first request that accepts gzip; nil: always plain
}

func newEncoded(body []byte, level int) *encoded {
	return &encoded{body: body, etag: etagOf(body), gzipped: gzipOnce(body, level)}
}

// newFile is a document or a file of /docs as encoded: no ETag.
func newFile(body []byte) *encoded { return &encoded{body: body, gzipped: gzipOnce(body, pageLevel)} }

// write answers r with e: 304 when If-None-Match names e's tag, else e's body (and link as
// its Link), gzipped when r accepts gzip and the body is long enough to gain by it.
func (e *encoded) write(w http.ResponseWriter, r *http.Request, contentType, link string) error {
	h := w.Header()
	if e.etag != "" {
		h.Set("ETag", e.etag)
		if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, e.etag) {
			w.WriteHeader(http.StatusNotModified)
			return nil
		}
	}
	if link != "" {
		h.Set("Link", link)
	}
	body := e.body
	if e.gzipped != nil && len(body) >= minGzipLength && acceptsGzip(r.Header) {
		body = e.gzipped()
		h.Set(echo.HeaderContentEncoding, "gzip")
	}
	h.Set(echo.HeaderContentType, contentType)
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

// bigBody is the size from which a body, once made, gives back the memory its making took:
// with GOGC at 400 the list of a million orders (105 MB) would keep the orders read resident
// until the next collection (bench/million.sh, RSS).
const bigBody = 32 << 20

// settled returns body; when it is big, the garbage of its making is collected and returned
// to the system first. (Its spare capacity, never written, is not resident.)
func settled(body []byte) []byte {
	if len(body) >= bigBody {
		debug.FreeOSMemory()
	}
	return body
}

// acceptsGzip reports whether Accept-Encoding accepts gzip (RFC 9110, 12.5.3): "gzip", "x-gzip"
// or else "*", weighted above 0 and not below "identity"; a weight that is no qvalue, nothing.
// (echo's gzip middleware took "gzip;q=0" for a yes.)
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
		if v = strings.TrimSpace(v); !qvalueSyntax.MatchString(v) {
			return -1
		}
		q, _ := strconv.ParseFloat(v, 64)
		return int(math.Round(q * 1000))
	}
	return 1000
}

var qvalueSyntax = regexp.MustCompile(`^(0(\.[0-9]{0,3})?|1(\.0{0,3})?)$`)

// etagOf is a weak tag of body: it is sent plain or gzipped, the same content. Two CRCs the
// CPU computes, 64 bits; every instance tags the same body alike.
func etagOf(body []byte) string {
	sum := uint64(crc32.Checksum(body, castagnoli))<<32 | uint64(crc32.ChecksumIEEE(body))
	return `W/"` + strconv.FormatUint(sum, 36) + `"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// etagMatches is the weak comparison of If-None-Match (RFC 9110, 13.1.2): "*" only as the
// whole value, else a list of entity-tags, read quote by quote since an opaque-tag may
// itself hold ',' and '*' ("x,*,y" is one tag, not a "*").
func etagMatches(ifNoneMatch, current string) bool {
	v := strings.Trim(ifNoneMatch, " \t")
	if v == "*" {
		return true
	}
	want := strings.TrimPrefix(current, "W/")
	for {
		v = strings.TrimPrefix(strings.TrimLeft(v, ", \t"), "W/")
		if !strings.HasPrefix(v, `"`) {
			return false // the end, or no entity-tag (the contract lets none through)
		}
		n := strings.IndexByte(v[1:], '"') + 2 // the tag's length, both quotes included
		if n < 2 {
			return false
		}
		if v[:n] == want {
			return true
		}
		v = v[n:]
	}
}
