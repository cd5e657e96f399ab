package api

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"iter"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd"
	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/genv2"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/orderjson"
	"github.com/petstore/orderd/internal/ratelimit"
)

// Server implements the operations of openapi.yaml on the domain's stores, and the steps before them.
type Server struct {
	*Config
	orders *order.View
	list   atomic.Pointer[encoded] // the list, encoded for one snapshot of the orders
	listMu sync.Mutex              // one encoding at a time; the others wait for it
	ops    map[string]*operation   // loadContract's
	cors   map[string]bool         // the origins allowed; none: CORS off
	access *slog.Logger            // nil: no access line

	streamsMu    sync.Mutex     // the event streams open here
	perKey       map[string]int // streams open, by key name
	writeTimeout time.Duration  // a client that read nothing of a write for two heartbeats has stopped reading
}

// ServerV2 implements the operations of openapi-v2.yaml; the events are in events.go.
type ServerV2 struct {
	v1    *Server // the orders, and the cancel, one rule for both versions
	pages pageCache
}

// ListOrders answers every order, or 304 when the client's tag is the current one.
func (s *Server) ListOrders(ctx context.Context, _ gen.ListOrdersRequestObject) (gen.ListOrdersResponseObject, error) {
	list, err := s.encodedList(ctx)
	if err != nil {
		return nil, err
	}
	return answer{list, ctx.(*exchange).req}, nil
}

// encodedList is the list of the current snapshot, encoded once.
func (s *Server) encodedList(ctx context.Context) (*encoded, error) {
	snap, err := s.orders.Current(ctx)
	if err != nil {
		return nil, err
	}
	if cur := s.list.Load(); cur != nil && cur.snap == snap {
		return cur, nil
	}
	s.listMu.Lock()
	defer s.listMu.Unlock()
	if cur := s.list.Load(); cur != nil && cur.snap == snap {
		return cur, nil // made while this request waited
	}
	e := newEncoded(settled(appendOrders(make([]byte, 0, 128*snap.Len()+2), snap.All())), listLevel)
	e.snap, e.eventID = snap, snap.Position // after which every change the list lacks is
	s.list.Store(e)
	return e, nil
}

// appendOrders writes the list as encoding/json writes []gen.Order (tested), without reflection.
func appendOrders(b []byte, orders iter.Seq[order.Order]) []byte {
	b = append(b, '[')
	for o := range orders {
		b = append(orderjson.AppendOrder(b, &o), ',')
	}
	return append(bytes.TrimSuffix(b, []byte(",")), ']', '\n')
}

// FindOrders answers a page of the orders that match, from where pageToken says, or 304.
func (s *ServerV2) FindOrders(ctx context.Context, req genv2.FindOrdersRequestObject) (genv2.FindOrdersResponseObject, error) {
	r := ctx.(*exchange).req
	snap, err := s.v1.orders.Current(ctx)
	if err != nil {
		return nil, err
	}
	pg, ok := s.pages.get(snap, r.URL.RawQuery)
	if secret := s.v1.PageTokens.InUse(); !ok || pg.secret != nil && pg.secret != secret {
		if pg, err = s.findPage(ctx, snap, req.Params, r.URL); err != nil {
			return nil, err
		}
		if pg.secret == nil || pg.secret == secret { // not when the secret changed meanwhile
			s.pages.put(snap, r.URL.RawQuery, pg)
		}
	}
	return answer{pg, r}, nil
}

func (s *ServerV2) findPage(ctx context.Context, snap *order.Snapshot, p genv2.FindOrdersParams, u *url.URL) (*encoded, error) {
	f := order.Filter{PetID: p.PetId, ShipFrom: upToNanosecond(p.ShipDateFrom, u, "shipDateFrom"),
		ShipBefore: upToNanosecond(p.ShipDateBefore, u, "shipDateBefore")}
	for _, st := range deref(p.Status) {
		f.Statuses = append(f.Statuses, order.Status(st))
	}
	page := order.PageRequest{Size: cmp.Or(int(deref(p.PageSize)), defaultPageSize)}
	if p.PageToken != nil {
		after, err := s.v1.PageTokens.Read(ctx, *p.PageToken, f)
		if err != nil {
			return nil, err
		}
		page.After = &after
	}
	found, err := order.Page{End: true}, error(nil)
	if !f.Empty() { // else a ship-date range without an instant: one empty last page, not a walk
		if found, err = snap.Find(f, page); err != nil {
			return nil, err
		}
	}
	next := ""
	if !found.End {
		if next, err = s.v1.PageTokens.Make(ctx, f, found.Resume); err != nil {
			return nil, err
		}
	}
	b := appendOrders(append(make([]byte, 0, 128*len(found.Orders)+96), `{"orders":`...), slices.Values(found.Orders))
	if b = b[:len(b)-1]; next != "" { // the list's newline ends the object
		b = append(append(append(b, `,"nextPageToken":"`...), next...), '"') // base64url: nothing to escape
	}
	pg := newEncoded(append(b, '}', '\n'), pageLevel)
	pg.eventID = snap.Position
	if next != "" {
		pg.link = nextLink("/store/orders", u.RawQuery, []string{"status", "petId", "shipDateFrom", "shipDateBefore", "pageSize"}, "pageToken", next)
	}
	if p.PageToken != nil || !found.End {
		pg.secret = s.v1.PageTokens.InUse() // the page's tokens verify under it, unless it changed
	}
	return pg, nil
}

const defaultPageSize = 100 // openapi-v2.yaml's

func deref[T any](p *T) (v T) {
	if p != nil {
		v = *p
	}
	return v
}

// pageCache keeps the pages found in one snapshot, by query as sent, emptied when full.
type pageCache struct {
	mu    sync.Mutex
	snap  *order.Snapshot
	pages map[string]*encoded
	bytes int
}

const maxCachedPages, maxCachedBytes = 1024, 16 << 20

func (c *pageCache) get(snap *order.Snapshot, query string) (*encoded, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pg, ok := c.pages[query]
	return pg, ok && c.snap == snap
}

func (c *pageCache) put(snap *order.Snapshot, query string, pg *encoded) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pages == nil || snap != c.snap || len(c.pages) >= maxCachedPages || c.bytes+len(pg.body) > maxCachedBytes {
		c.pages, c.snap, c.bytes = map[string]*encoded{}, snap, 0
	}
	c.pages[query] = pg
	c.bytes += len(pg.body)
}

// upToNanosecond is t a nanosecond later when the fraction sent has a non-zero digit past the ninth.
func upToNanosecond(t *time.Time, u *url.URL, name string) *time.Time {
	if t == nil {
		return nil // and the query is not parsed again: most finds have no ship dates
	}
	_, frac, _ := strings.Cut(u.Query().Get(name), ".")
	digits := frac[:len(frac)-len(strings.TrimLeft(frac, "0123456789"))] // up to the offset
	if len(strings.TrimRight(digits, "0")) <= 9 {
		return t
	}
	later := t.Add(time.Nanosecond)
	return &later
}

// nextLink is the next page's Link (RFC 8288): the kept parameters as sent, name set to value.
func nextLink(path, query string, kept []string, name, value string) string {
	sent, _ := url.ParseQuery(query)
	q := url.Values{}
	for _, k := range kept {
		if v, ok := sent[k]; ok {
			q[k] = v
		}
	}
	q.Set(name, value)
	return "<" + BasePathV2 + path + "?" + q.Encode() + `>; rel="next"`
}

func (s *Server) CancelOrder(ctx context.Context, req gen.CancelOrderRequestObject) (gen.CancelOrderResponseObject, error) {
	return gen.CancelOrder204Response{}, s.cancel(ctx, req.OrderId)
}

func (s *ServerV2) CancelOrder(ctx context.Context, req genv2.CancelOrderRequestObject) (genv2.CancelOrderResponseObject, error) {
	return genv2.CancelOrder204Response{}, s.v1.cancel(ctx, req.OrderId)
}

// cancel is every version's cancel, its outcome counted; nil (204): cancelled now or already.
func (s *Server) cancel(ctx context.Context, id int64) error {
	_, changed, err := s.orders.Cancel(ctx, id)
	switch {
	case err == nil && changed:
		s.Observer.Cancel("cancelled")
		s.Observer.Event(string(order.EventCancelled)) // the store recorded it with the change
	case err == nil:
		s.Observer.Cancel("already_cancelled")
	case errors.Is(err, order.ErrNotFound):
		s.Observer.Cancel("not_found")
		return orderError(id, err)
	case errors.Is(err, order.ErrAlreadyShipped):
		s.Observer.Cancel("shipped")
		return orderError(id, err)
	case !requestEnded(ctx, err): // a client that hung up is no failed cancel
		s.Observer.Cancel("error")
	}
	return err
}

// GetOrder answers the order with the id, or 404 order_not_found.
func (s *ServerV2) GetOrder(ctx context.Context, req genv2.GetOrderRequestObject) (genv2.GetOrderResponseObject, error) {
	snap, err := s.v1.orders.Current(ctx)
	if err != nil {
		return nil, err
	}
	o, ok := snap.Get(req.OrderId)
	if !ok {
		return nil, orderError(req.OrderId, order.ErrNotFound)
	}
	return genv2.GetOrder200JSONResponse{Body: genv2.Order{Complete: o.Complete, Id: o.ID, PetId: o.PetID,
		Quantity: o.Quantity, ShipDate: o.ShipDate.UTC(), Status: genv2.OrderStatus(o.Status)}}, nil
}

// orderError is a refusal about one order, as its answer says it: "order 10: …".
func orderError(id int64, err error) error { return fmt.Errorf("order %d: %w", id, err) }

// documents are both versions', gzipped once.
var documents = [...]*encoded{newFile(orderd.OpenAPI, "application/yaml"), newFile(orderd.OpenAPIV2, "application/yaml")}

func (s *Server) GetOpenAPIDocument(ctx context.Context, _ gen.GetOpenAPIDocumentRequestObject) (gen.GetOpenAPIDocumentResponseObject, error) {
	return answer{documents[0], ctx.(*exchange).req}, nil
}

func (s *ServerV2) GetOpenAPIDocument(ctx context.Context, _ genv2.GetOpenAPIDocumentRequestObject) (genv2.GetOpenAPIDocumentResponseObject, error) {
	return answer{documents[1], ctx.(*exchange).req}, nil
}

// petRoute is the deprecated operation's route, whose every answer is marked (writeHeaders).
const petRoute = BasePath + "/pets/:petId"

var errSunset = &problem{http.StatusGone, gen.ErrorCodeEndpointSunset, "GET /pets/{petId} was retired on its sunset date; see the Link header"}

// Sunset is the schedule of the deprecated pets operation.
type Sunset struct {
	DeprecatedAt time.Time
	SunsetAt     time.Time
	Link         string // migration notes
}

// GetPetById answers a pet until the sunset date, then 410.
func (s *Server) GetPetById(ctx context.Context, req gen.GetPetByIdRequestObject) (gen.GetPetByIdResponseObject, error) {
	if !s.Now().Before(s.Sunset.SunsetAt) {
		return nil, errSunset
	}
	p, err := s.Pets.Pet(ctx, req.PetId)
	if err != nil {
		return nil, fmt.Errorf("pet %d: %w", req.PetId, err)
	}
	return gen.GetPetById200JSONResponse{Body: gen.Pet{Id: p.ID, Name: p.Name, Status: gen.PetStatus(p.Status)}}, nil
}

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
	snap        *order.Snapshot // the list's, for encodedList
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
	h.Set(echo.HeaderContentLength, strconv.Itoa(len(body))) // else one over net/http's 2 KB buffer is sent chunked
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(body)
	return err
}

// writeHeaders is the header hook: the headers every answer of a route carries, whoever wrote it.
func (ex *exchange) writeHeaders() {
	s, res := ex.s, ex.res
	h := res.Header()
	h.Set(echo.HeaderXRequestID, ex.id)
	h.Set(echo.HeaderXContentTypeOptions, "nosniff")
	if ex.route != "/metrics" { // which compresses itself
		h.Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
	}
	if d := &ex.limit; ex.limited {
		w, secs := d.Binding, int64(d.RetryAfter.Seconds()) // the IETF t: until w ends
		h.Set("X-Ratelimit-Limit", strconv.FormatInt(w.Limit, 10))
		h.Set("X-Ratelimit-Remaining", strconv.FormatInt(w.Remaining, 10))
		h.Set("X-Ratelimit-Reset", strconv.FormatInt(w.End.Add(time.Second-1).Unix(), 10)) // rounded up, as Retry-After
		h.Set("Ratelimit", `"`+w.Name+`";r=`+strconv.FormatInt(w.Remaining, 10)+";t="+strconv.FormatInt(secs, 10))
		h.Set("Ratelimit-Policy", policyItem(d.Minute)+", "+policyItem(d.Day))
		if res.Status == http.StatusTooManyRequests && !ex.noRetryAfter {
			h.Set("Retry-After", strconv.FormatInt(secs, 10))
		}
	}
	switch ex.route {
	case petRoute: // RFC 9745, RFC 8594, and the migration notes
		h.Set("Deprecation", "@"+strconv.FormatInt(s.Sunset.DeprecatedAt.Unix(), 10))
		h.Set("Sunset", s.Sunset.SunsetAt.UTC().Format(http.TimeFormat))
		h.Set("Link", "<"+s.Sunset.Link+`>; rel="sunset"`)
	case eventsRoute: // a page or a stream by Accept: caches must key on it (RFC 9110 §12.5.5)
		h.Add(echo.HeaderVary, echo.HeaderAccept)
	}
	if res.Status == http.StatusServiceUnavailable {
		h.Set("Retry-After", strconv.Itoa(retryAfterUnavailable))
	}
	stream := h.Get(echo.HeaderContentType) == eventStreamType
	if res.Status >= 400 || stream {
		h.Set("Cache-Control", "no-store")
	}
	if len(ex.req.TransferEncoding) > 0 { // it may have carried a Content-Length Go removed: RFC 9112 §6.1
		h.Set(echo.HeaderConnection, "close")
	}
	if len(s.cors) > 0 && ex.base { // CORS on: the answer differs by Origin
		h.Add(echo.HeaderVary, "Origin")
		if origin := ex.req.Header.Get("Origin"); s.cors[origin] {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		}
	}
	if stream {
		ex.opened = s.Now() // its 200 is committed: the stream is open
	}
}

// policyItem is w as an item of the RateLimit-Policy header: "name";q=limit;w=seconds.
func policyItem(w ratelimit.Window) string {
	return `"` + w.Name + `";q=` + strconv.FormatInt(w.Limit, 10) + ";w=" + strconv.FormatInt(w.Seconds(), 10)
}

func gzipOnce(body []byte, level int) func() []byte {
	return sync.OnceValue(func() []byte {
		var out bytes.Buffer
		z, _ := gzip.NewWriterLevel(&out, level)
		z.Write(body) // a Buffer's writes cannot fail
		z.Close()
		return settled(out.Bytes())
	})
}

// settled returns body, from 32 MiB on after giving back its making's garbage (GOGC 400 would keep it).
func settled(body []byte) []byte {
	if len(body) >= 32<<20 {
		debug.FreeOSMemory()
	}
	return body
}

// acceptsGzip: Accept-Encoding weights gzip (x-gzip, else "*") above 0, not below identity (RFC 9110 §12.5.3).
func acceptsGzip(h http.Header) bool {
	v := h.Values(echo.HeaderAcceptEncoding)
	gz, identity, star := weight(v, "gzip", "x-gzip"), weight(v, "identity"), weight(v, "*")
	if gz < 0 {
		gz = star
	}
	if identity < 0 {
		identity = star
	}
	return gz > 0 && gz >= identity
}

// weight is the greatest weight (in thousandths; -1: none) lines give a valid item named one of names.
func weight(lines []string, names ...string) int {
	w := -1
	for _, line := range lines {
		for item := range strings.SplitSeq(line, ",") {
			name, params, _ := strings.Cut(item, ";")
			if !slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, strings.TrimSpace(name)) }) {
				continue
			}
			q := "1"
			for p := range strings.SplitSeq(params, ";") {
				if k, v, _ := strings.Cut(p, "="); strings.EqualFold(strings.TrimSpace(k), "q") {
					q = strings.TrimSpace(v)
					break
				}
			}
			if f, err := strconv.ParseFloat(q, 64); err == nil && qvalueSyntax.MatchString(q) {
				w = max(w, int(math.Round(f*1000)))
			}
		}
	}
	return w
}

var qvalueSyntax = regexp.MustCompile(`^(0(\.[0-9]{0,3})?|1(\.0{0,3})?)$`)

// etagOf is a weak tag of body, plain or gzipped: two hardware CRCs, alike on every instance.
func etagOf(body []byte) string {
	sum := uint64(crc32.Checksum(body, castagnoli))<<32 | uint64(crc32.ChecksumIEEE(body))
	return `W/"` + strconv.FormatUint(sum, 36) + `"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// etagMatches is If-None-Match's weak comparison (RFC 9110 §13.1.2), quote by quote: a tag may hold ',' and '*'.
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
