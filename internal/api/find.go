package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/genv2"
	"github.com/petstore/orderd/internal/order"
)

// defaultPageSize is the page size of a find that names none, as openapi-v2.yaml says.
const defaultPageSize = 100

// FindOrders answers one page of the orders that match the request's filters, from where its
// pageToken says (the first order without one), or 304 when the client's tag is the page's.
// The store bounds the work of each call (order.ScanBudget); the page's token is bound to the
// filters, so the next page is read with the same ones.
func (s *ServerV2) FindOrders(ctx context.Context, req genv2.FindOrdersRequestObject) (genv2.FindOrdersResponseObject, error) {
	p := req.Params
	f := filterOf(p)
	page := order.PageRequest{Size: defaultPageSize}
	if p.PageSize != nil {
		page.Size = int(*p.PageSize)
	}
	if p.PageToken != nil {
		// A refused token is a client's error (errors.go says which); any other error is
		// the secret store's, answered like the order store's.
		after, err := s.tokens.Read(ctx, *p.PageToken, f)
		if err != nil {
			return nil, err
		}
		page.After = &after
	}
	// A range of ship dates that holds no instant matches nothing: one empty last page, rather
	// than a walk of every id, a page and a request of the caller's quota each.
	found := order.Page{End: true}
	var err error
	if !f.Empty() {
		if found, err = s.finder.Find(ctx, f, page); err != nil {
			return nil, err
		}
	}
	var next string
	if !found.End {
		if next, err = s.tokens.Make(ctx, f, found.Resume); err != nil {
			return nil, err
		}
	}
	body := appendPage(make([]byte, 0, 128*len(found.Orders)+96), found.Orders, next)
	answer := pageAnswer{body: body, etag: etagOf(body)}
	if p.IfNoneMatch != nil && etagMatches(*p.IfNoneMatch, answer.etag) {
		return genv2.FindOrders304Response{Headers: genv2.FindOrders304ResponseHeaders{ETag: answer.etag}}, nil
	}
	if next != "" {
		answer.link = nextLink(queryOf(ctx), next)
	}
	return answer, nil
}

// filterOf is the filter the request's parameters name; validation has checked them.
func filterOf(p genv2.FindOrdersParams) order.Filter {
	var f order.Filter
	if p.Status != nil {
		for _, st := range *p.Status {
			f.Statuses = append(f.Statuses, order.Status(st))
		}
	}
	f.PetID, f.ShipFrom, f.ShipBefore = p.PetId, p.ShipDateFrom, p.ShipDateBefore
	return f
}

// appendPage writes the OrderPage of orders and, unless it is empty, the next page's token:
// the orders as list.go's appendOrders writes them (the same bytes, for the same reasons).
func appendPage(b []byte, orders []order.Order, next string) []byte {
	b = append(b, `{"orders":`...)
	b = appendOrders(b, orders)
	b = b[:len(b)-1] // appendOrders ends the list with a newline, which ends the object here
	if next != "" {
		b = append(b, `,"nextPageToken":"`...)
		b = append(b, next...) // base64url: nothing to escape
		b = append(b, '"')
	}
	return append(b, '}', '\n')
}

// pageAnswer writes one page of a find. It implements the generated response interface, as
// listAnswer does, so that the body is encoded once (its ETag is made from it) and sent
// whole, with its Content-Length. The rate-limit headers are written by observe's hook.
type pageAnswer struct {
	body []byte
	etag string
	link string // the Link header, when there is a next page
}

func (r pageAnswer) VisitFindOrdersResponse(w http.ResponseWriter) error {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Etag"] = []string{r.etag}
	if r.link != "" {
		h["Link"] = []string{r.link}
	}
	h["Content-Length"] = []string{strconv.Itoa(len(r.body))}
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(r.body)
	return err
}

// findQueryParameters are the query parameters of the find that its Link repeats: all but
// pageToken, which it replaces. Any other parameter is none of the contract's and is dropped,
// which also bounds the Link's length.
var findQueryParameters = []string{"status", "petId", "shipDateFrom", "shipDateBefore", "pageSize"}

// nextLink is the Link header of the next page (RFC 8288): the request as sent, its
// pageToken set to next.
func nextLink(sent url.Values, next string) string {
	q := url.Values{}
	for _, name := range findQueryParameters {
		if v, ok := sent[name]; ok {
			q[name] = v
		}
	}
	q.Set("pageToken", next)
	return "<" + BasePathV2 + "/store/orders?" + q.Encode() + `>; rel="next"`
}

// queryKey is the context key of the request's query, which withQuery puts there.
type queryKey struct{}

// withQuery gives the find's handler the query as sent, which the strict interface does not
// pass on: the Link repeats it.
func withQuery(f genv2.StrictHandlerFunc, operationID string) genv2.StrictHandlerFunc {
	if operationID != "FindOrders" {
		return f
	}
	return func(c echo.Context, req any) (any, error) {
		r := c.Request()
		c.SetRequest(r.WithContext(context.WithValue(r.Context(), queryKey{}, c.QueryParams())))
		return f(c, req)
	}
}

// queryOf is the query withQuery put in ctx.
func queryOf(ctx context.Context) url.Values {
	q, _ := ctx.Value(queryKey{}).(url.Values)
	return q
}
