package api

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/genv2"
	"github.com/petstore/orderd/internal/order"
)

const defaultPageSize = 100 // openapi-v2.yaml's

// FindOrders answers one page of the orders that match the filters, from where pageToken says,
// or 304; a page asked for again at the same version is answered from the cache.
func (s *ServerV2) FindOrders(ctx context.Context, req genv2.FindOrdersRequestObject) (genv2.FindOrdersResponseObject, error) {
	r := exchangeOf(ctx).req
	snap, err := s.v1.orders.Current(ctx)
	if err != nil {
		return nil, err
	}
	pg, ok := s.pages.get(snap, r.URL.RawQuery)
	if secret := s.tokens.InUse(); !ok || pg.secret != nil && pg.secret != secret {
		if pg, err = s.findPage(ctx, snap, req.Params, filterOf(req.Params, r.URL), r.URL.RawQuery); err != nil {
			return nil, err
		}
		if pg.secret == nil || pg.secret == secret { // not when the secret changed meanwhile
			s.pages.put(snap, r.URL.RawQuery, pg)
		}
	}
	return pageAnswer{pg, r}, nil
}

func (s *ServerV2) findPage(ctx context.Context, snap *order.Snapshot, p genv2.FindOrdersParams, f order.Filter, query string) (*encodedPage, error) {
	page := order.PageRequest{Size: defaultPageSize}
	if p.PageSize != nil {
		page.Size = int(*p.PageSize)
	}
	if p.PageToken != nil {
		after, err := s.tokens.Read(ctx, *p.PageToken, f)
		if err != nil {
			return nil, err
		}
		page.After = &after
	}
	// A ship-date range without an instant matches nothing: one empty last page, not a walk.
	found := order.Page{End: true}
	var err error
	if !f.Empty() {
		if found, err = snap.Find(f, page); err != nil {
			return nil, err
		}
	}
	pg := &encodedPage{eventID: snap.Position}
	next := ""
	if !found.End {
		if next, err = s.tokens.Make(ctx, f, found.Resume); err != nil {
			return nil, err
		}
		pg.link = nextLink("/store/orders", query, findQueryParameters, "pageToken", next)
	}
	if p.PageToken != nil || !found.End {
		pg.secret = s.tokens.InUse() // the page's tokens verify under it, unless it changed
	}
	pg.encoded = newEncoded(appendPage(make([]byte, 0, 128*len(found.Orders)+96), found.Orders, next), pageLevel)
	return pg, nil
}

// encodedPage is one page of a find, as encoded when found.
type encodedPage struct {
	*encoded
	secret  *[]byte // the page-token secret its tokens verify under; nil when it has none
	link    string  // its Link header: the next page, or "" on the last
	eventID string  // Orders-Event-Id, read before the page
}

type pageAnswer struct {
	*encodedPage
	r *http.Request
}

func (a pageAnswer) VisitFindOrdersResponse(w http.ResponseWriter) error {
	w.Header().Set(ordersEventID, a.eventID)
	return a.write(w, a.r, echo.MIMEApplicationJSON, a.link)
}

// pageCache keeps the pages found in one snapshot of the orders, by query as sent. A new
// snapshot, or a full cache, starts it again empty: queries made to miss cost bounded memory.
type pageCache struct {
	mu    sync.Mutex
	snap  *order.Snapshot
	pages map[string]*encodedPage
	bytes int
}

const (
	maxCachedPages = 1024
	maxCachedBytes = 16 << 20
)

func (c *pageCache) get(snap *order.Snapshot, query string) (*encodedPage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pg, ok := c.pages[query]
	return pg, ok && c.snap == snap
}

func (c *pageCache) put(snap *order.Snapshot, query string, pg *encodedPage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pages == nil || snap != c.snap || len(c.pages) >= maxCachedPages || c.bytes+len(pg.body) > maxCachedBytes {
		c.pages, c.snap, c.bytes = map[string]*encodedPage{}, snap, 0
	}
	c.pages[query] = pg
	c.bytes += len(pg.body)
}

// filterOf is the filter the request's (validated) parameters name; u is the URL as sent.
func filterOf(p genv2.FindOrdersParams, u *url.URL) order.Filter {
	var f order.Filter
	if p.Status != nil {
		for _, st := range *p.Status {
			f.Statuses = append(f.Statuses, order.Status(st))
		}
	}
	f.PetID = p.PetId
	f.ShipFrom = upToNanosecond(p.ShipDateFrom, u, "shipDateFrom")
	f.ShipBefore = upToNanosecond(p.ShipDateBefore, u, "shipDateBefore")
	return f
}

// upToNanosecond is t, parsed from the query parameter name of u, one nanosecond later when
// the fraction sent has a digit past the ninth that is not 0, which the parse dropped. Order
// dates are whole nanoseconds, so the bound rounded up keeps exactly the orders the instant
// sent does, as shipDateFrom (at or after) and as shipDateBefore (before); and a page token,
// which hashes the bounds, tells the two instants apart.
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

// appendPage writes the OrderPage of orders and, unless it is empty, the next page's token.
func appendPage(b []byte, orders []order.Order, next string) []byte {
	b = appendOrders(append(b, `{"orders":`...), slices.Values(orders))
	b = b[:len(b)-1] // the list's newline ends the object
	if next != "" {
		b = append(append(append(b, `,"nextPageToken":"`...), next...), '"') // base64url: nothing to escape
	}
	return append(b, '}', '\n')
}

// findQueryParameters are those the Link repeats, pageToken replaced; any other is dropped,
// which also bounds the Link's length.
var findQueryParameters = []string{"status", "petId", "shipDateFrom", "shipDateBefore", "pageSize"}

// nextLink is the Link of the next page (RFC 8288): the request to path with the parameters
// kept of the query as sent, and the parameter name set to value.
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
