package api

import (
	"context"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/order"
)

// ListOrders answers every order, or 304 when the client's tag is the current one.
func (s *Server) ListOrders(ctx context.Context, req gen.ListOrdersRequestObject) (gen.ListOrdersResponseObject, error) {
	list, err := s.lists.get(ctx)
	if err != nil {
		return nil, err
	}
	if req.Params.IfNoneMatch != nil && etagMatches(*req.Params.IfNoneMatch, list.etag) {
		return gen.ListOrders304Response{Headers: gen.ListOrders304ResponseHeaders{ETag: list.etag}}, nil
	}
	return listAnswer{list}, nil
}

// listCache keeps the encodings of the list for one version of the orders, plain and gzip:
// while they do not change, a list request costs a version check and a write of shared bytes,
// however many orders and readers there are (the heap does not grow with readers × orders).
type listCache struct {
	orders order.Store
	cur    atomic.Pointer[encodedList]
	build  sync.Mutex // one encoding at a time, plain or gzip; the others wait for it
}

// encodedList is the answer to a list request for one version, its header values made with
// it: a list request allocates none of them.
type encodedList struct {
	version uint64
	body    []byte
	etag    string
	// The header values, as the slices Header.Set would make: shared by every request of
	// the version, so each has cap == len (an Add appends to a copy, never to them).
	etagValue, contentLength []string
	// The gzip encoding of body, made by the first request of the version that accepts
	// gzip (listCache.gzipped), so that a version no such client asks for is never compressed.
	gzip  atomic.Pointer[gzipList]
	cache *listCache // the cache that made it, which makes its gzip encoding too
}

// gzipList is the list's body gzipped, with its own Content-Length.
type gzipList struct {
	body          []byte
	contentLength []string
}

func (c *listCache) get(ctx context.Context) (*encodedList, error) {
	// The version is read before the list: if the orders change in between, the list read is
	// newer than its version says, and the next request replaces it; never older.
	v, err := c.orders.Version(ctx)
	if err != nil {
		return nil, err
	}
	if cur := c.cur.Load(); cur != nil && cur.version == v {
		return cur, nil
	}
	c.build.Lock()
	defer c.build.Unlock()
	if cur := c.cur.Load(); cur != nil && cur.version == v {
		return cur, nil // made while this request waited
	}
	orders, err := c.orders.List(ctx)
	if err != nil {
		return nil, err
	}
	body := appendOrders(make([]byte, 0, 128*len(orders)+2), orders)
	etag := etagOf(body)
	e := &encodedList{version: v, body: body, etag: etag,
		etagValue: []string{etag}, contentLength: contentLength(len(body)), cache: c}
	c.cur.Store(e)
	return e, nil
}

// gzipped is e's body gzipped at listLevel (compress.go), made once for e.
func (c *listCache) gzipped(e *encodedList) *gzipList {
	if z := e.gzip.Load(); z != nil {
		return z
	}
	c.build.Lock()
	defer c.build.Unlock()
	if z := e.gzip.Load(); z != nil {
		return z // made while this request waited
	}
	body := gzipBytes(e.body, listLevel)
	z := &gzipList{body: body, contentLength: contentLength(len(body))}
	e.gzip.Store(z)
	return z
}

// appendOrders writes the list as encoding/json writes []gen.Order (the test holds it to
// that, byte for byte), without reflection or an allocation per field.
//
// Why not encoding/json of the generated type: the encoding is made once per version, but
// while it is made every list reader waits, and its garbage is the service's peak heap.
// BenchmarkEncodeList (go1.26, 2 cores; median of 3, -benchmem):
//
//	orders      appendOrders                      json.Marshal([]gen.Order)
//	10,000        1.9 ms    1.3 MB       1 alloc     12.6 ms    2.9 MB     30k allocs
//	100,000      16 ms     13 MB         1 alloc    113 ms     34 MB      300k allocs
//	1,000,000   171 ms    128 MB         1 alloc   1279 ms    263-531 MB    3M allocs
//
// At a million orders encoding/json would add a second to the first list request after
// every cancel (docs/benchmarks.md measures 0.49 s to its first byte) and two to four times
// the memory while it runs: it matters, so the hand-written encoder stays.
func appendOrders(b []byte, orders []order.Order) []byte {
	b = append(b, '[')
	for i := range orders {
		o := &orders[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"complete":`...)
		b = strconv.AppendBool(b, o.Complete)
		b = append(b, `,"id":`...)
		b = strconv.AppendInt(b, o.ID, 10)
		b = append(b, `,"petId":`...)
		b = strconv.AppendInt(b, o.PetID, 10)
		b = append(b, `,"quantity":`...)
		b = strconv.AppendInt(b, int64(o.Quantity), 10)
		b = append(b, `,"shipDate":"`...)
		b = o.ShipDate.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","status":"`...)
		b = append(b, o.Status...) // one of three known words: nothing to escape
		b = append(b, `"}`...)
	}
	return append(b, ']', '\n')
}

// listAnswer writes a cached list: gzipped, with its own length, when the request accepts
// gzip and the list is long enough (compress's writer then passes it through; a shorter one
// it sends plain). It implements the generated response interface: the generated 200
// response would encode the list again on every request. Its rate-limit headers, like every
// answer's, are written by observe's hook when the status is. One pointer, so that it is
// returned as the response interface without an allocation.
type listAnswer struct{ *encodedList }

func (r listAnswer) VisitListOrdersResponse(w http.ResponseWriter) error {
	body, length := r.body, r.contentLength
	h := w.Header()
	if len(r.body) >= minGzipLength && gzipAccepted(w) {
		z := r.cache.gzipped(r.encodedList)
		body, length = z.body, z.contentLength
		h["Content-Encoding"] = gzipEncoding
	}
	// Canonical names, as Header.Set would make them. Content-Length, because the body is
	// whole: without it a list longer than net/http's 2 KB buffer is sent chunked, one more
	// write per answer.
	h["Content-Type"] = jsonContentType
	h["Etag"] = r.etagValue
	h["Content-Length"] = length
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(body)
	return err
}

// contentLength is a Content-Length value of n, as a header map holds it (cap == len).
func contentLength(n int) []string { return []string{strconv.Itoa(n)} }

// jsonContentType is the Content-Type value of the list, shared like encodedList's values.
var jsonContentType = []string{"application/json"}

// etagOf is a weak tag of the encoded list: weak, because the same list is sent plain or
// gzipped, and both are the same content.
func etagOf(body []byte) string {
	h := fnv.New64a()
	h.Write(body)
	return `W/"` + strconv.FormatUint(h.Sum64(), 36) + `"`
}

// etagMatches is the weak comparison of If-None-Match (RFC 9110, 13.1.2): "*" or any listed
// tag whose opaque part equals that of current.
func etagMatches(ifNoneMatch, current string) bool {
	want := strings.TrimPrefix(current, "W/")
	for _, t := range strings.Split(ifNoneMatch, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == want {
			return true
		}
	}
	return false
}
