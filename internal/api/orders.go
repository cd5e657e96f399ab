package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petstore/orderd"
	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/genv2"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/orderjson"
)

// Server implements the operations of openapi.yaml on the domain's stores.
type Server struct {
	*Config
	orders *order.View
	lists  *listCache
}

// ServerV2 implements the operations of openapi-v2.yaml; the events are in events.go.
type ServerV2 struct {
	v1      *Server // the orders, and the cancel, one rule for both versions
	pages   pageCache
	streams *streams
}

// ListOrders answers every order, or 304 when the client's tag is the current one.
func (s *Server) ListOrders(ctx context.Context, _ gen.ListOrdersRequestObject) (gen.ListOrdersResponseObject, error) {
	list, err := s.lists.get(ctx)
	if err != nil {
		return nil, err
	}
	return answer{list, exchangeOf(ctx).req}, nil
}

// listCache keeps the list encoded for one snapshot of the orders.
type listCache struct {
	orders *order.View
	cur    atomic.Pointer[encoded]
	build  sync.Mutex // one encoding at a time; the others wait for it
}

func (c *listCache) get(ctx context.Context) (*encoded, error) {
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
	e := newEncoded(settled(appendOrders(make([]byte, 0, 128*snap.Len()+2), snap.All())), listLevel)
	e.snap, e.eventID = snap, snap.Position // after which every change the list lacks is
	c.cur.Store(e)
	return e, nil
}

// appendOrders writes the list as encoding/json writes []gen.Order (tested), without reflection.
func appendOrders(b []byte, orders iter.Seq[order.Order]) []byte {
	b = append(b, '[')
	start := len(b)
	for o := range orders {
		if len(b) > start {
			b = append(b, ',')
		}
		b = orderjson.AppendOrder(b, &o)
	}
	return append(b, ']', '\n')
}

// FindOrders answers a page of the orders that match, from where pageToken says, or 304.
func (s *ServerV2) FindOrders(ctx context.Context, req genv2.FindOrdersRequestObject) (genv2.FindOrdersResponseObject, error) {
	r := exchangeOf(ctx).req
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
	// A ship-date range without an instant matches nothing: one empty last page, not a walk.
	found, err := order.Page{End: true}, error(nil)
	if !f.Empty() {
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

// deref is *p, or the zero value.
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

const (
	maxCachedPages = 1024
	maxCachedBytes = 16 << 20
)

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

// upToNanosecond is t one nanosecond later when the fraction sent has a non-zero digit past the
// ninth: ship dates are whole nanoseconds, so it keeps the orders the instant sent does, and a
// page token, which hashes the bounds, tells the two apart.
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

// nextLink is the next page's Link (RFC 8288): the query as sent, only the kept parameters,
// name set to value.
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

// CancelOrder cancels a pending order; a refusal (404, 409) is an error for errorHandler.
func (s *Server) CancelOrder(ctx context.Context, req gen.CancelOrderRequestObject) (gen.CancelOrderResponseObject, error) {
	return gen.CancelOrder204Response{}, s.cancel(ctx, req.OrderId)
}

// CancelOrder cancels a pending order as version 1 does.
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

// GetOpenAPIDocument serves openapi.yaml as it is embedded in the binary.
func (s *Server) GetOpenAPIDocument(ctx context.Context, _ gen.GetOpenAPIDocumentRequestObject) (gen.GetOpenAPIDocumentResponseObject, error) {
	return answer{documents[0], exchangeOf(ctx).req}, nil
}

// GetOpenAPIDocument serves openapi-v2.yaml as it is embedded in the binary.
func (s *ServerV2) GetOpenAPIDocument(ctx context.Context, _ genv2.GetOpenAPIDocumentRequestObject) (genv2.GetOpenAPIDocumentResponseObject, error) {
	return answer{documents[1], exchangeOf(ctx).req}, nil
}

// petRoute is the deprecated operation's route, whose every answer is marked (observe.go).
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
	switch {
	case err == nil:
		return gen.GetPetById200JSONResponse{Body: gen.Pet{Id: p.ID, Name: p.Name, Status: gen.PetStatus(p.Status)}}, nil
	case errors.Is(err, order.ErrPetNotFound):
		return nil, fmt.Errorf("pet %d: %w", req.PetId, err)
	}
	return nil, err
}
