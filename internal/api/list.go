package api

import (
	"context"
	"hash/crc32"
	"iter"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/labstack/echo/v4"
	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/orderjson"
)

// ListOrders answers every order, or 304 when the client's tag is the current one.
func (s *Server) ListOrders(ctx context.Context, req gen.ListOrdersRequestObject) (gen.ListOrdersResponseObject, error) {
	list, err := s.lists.get(ctx)
	if err != nil {
		return nil, err
	}
	if req.Params.IfNoneMatch != nil && etagMatches(*req.Params.IfNoneMatch, list.etag) {
		return notModified{list.etag, list.eventID}, nil
	}
	return listAnswer{list.encoded, list.eventID}, nil
}

// listCache keeps the list encoded for one snapshot of the orders.
type listCache struct {
	orders *order.View
	cur    atomic.Pointer[encodedList]
	build  sync.Mutex // one encoding at a time; the others wait for it
}

type encodedList struct {
	snap *order.Snapshot
	*encoded
	eventID string // Orders-Event-Id: the snapshot's position, after which every change it lacks is
}

func (c *listCache) get(ctx context.Context) (*encodedList, error) {
	snap, err := c.orders.Current(ctx)
	if err != nil {
		return nil, err
	}
	if cur := c.cur.Load(); cur != nil && cur.snap == snap {
		return cur, nil
	}
	c.build.Lock()
	defer c.build.Unlock()
	if cur := c.cur.Load(); cur != nil && cur.snap == snap {
		return cur, nil // made while this request waited
	}
	b := appendOrders(make([]byte, 0, 128*snap.Len()+2), snap.All())
	e := &encodedList{snap, newEncoded(settled(b), listLevel), snap.Position}
	c.cur.Store(e)
	return e, nil
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

// encoded is a body made once and sent many times (the list, a page of a version, a file).
type encoded struct {
	body    []byte
	etag    string        // none for a file
	gzipped func() []byte // made by the first request that accepts gzip
}

func newEncoded(body []byte, level int) *encoded {
	return &encoded{body: body, etag: etagOf(body), gzipped: gzipOnce(body, level)}
}

// write sends e's body, gzipped when the request accepts it and it is not too short.
func (e *encoded) write(w http.ResponseWriter, contentType string) error {
	body, h := e.body, w.Header()
	if len(body) >= minGzipLength && gzipAccepted(w) {
		body = e.gzipped()
		h.Set(echo.HeaderContentEncoding, "gzip")
	}
	h.Set(echo.HeaderContentType, contentType)
	if e.etag != "" {
		h.Set("ETag", e.etag)
	}
	// The body is whole: without a length, one over net/http's 2 KB buffer is sent chunked.
	h.Set(echo.HeaderContentLength, strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(body)
	return err
}

// listAnswer writes the list; the generated 200 response would encode it on every request.
type listAnswer struct {
	*encoded
	eventID string
}

func (r listAnswer) VisitListOrdersResponse(w http.ResponseWriter) error {
	w.Header().Set(ordersEventID, r.eventID)
	return r.write(w, echo.MIMEApplicationJSON)
}

// ordersEventID names the position in the log from which a reader of a list follows its changes.
const ordersEventID = "Orders-Event-Id"

// notModified is a 304 with its tag. The generated one would set every header it declares,
// blank, for writeHeaders to set again.
type notModified struct{ etag, eventID string }

func (r notModified) VisitListOrdersResponse(w http.ResponseWriter) error { return r.write(w) }
func (r notModified) VisitFindOrdersResponse(w http.ResponseWriter) error { return r.write(w) }

func (r notModified) write(w http.ResponseWriter) error {
	w.Header().Set("ETag", r.etag)
	w.Header().Set(ordersEventID, r.eventID)
	w.WriteHeader(http.StatusNotModified)
	return nil
}

// appendOrders writes the list as encoding/json writes []gen.Order, byte for byte (tested),
// without reflection: list readers wait while it runs (bench/notes.md).
func appendOrders(b []byte, orders iter.Seq[order.Order]) []byte {
	b = append(b, '[')
	first := true
	for o := range orders {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = orderjson.AppendOrder(b, &o)
	}
	return append(b, ']', '\n')
}

// etagOf is a weak tag of body: it is sent plain or gzipped, the same content. It is two CRCs
// the CPU computes, 64 bits as FNV-64 gave, which took the list of a million 0.14 s; every
// instance tags the same body alike.
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
