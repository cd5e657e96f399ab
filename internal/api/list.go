package api

import (
	"context"
	"iter"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/orderjson"
)

// ordersEventID names the position in the log from which a reader of a list follows its changes.
const ordersEventID = "Orders-Event-Id"

// ListOrders answers every order, or 304 when the client's tag is the current one.
func (s *Server) ListOrders(ctx context.Context, _ gen.ListOrdersRequestObject) (gen.ListOrdersResponseObject, error) {
	list, err := s.lists.get(ctx)
	if err != nil {
		return nil, err
	}
	return listAnswer{list, exchangeOf(ctx).req}, nil
}

// listAnswer writes the list as encoded once; the generated 200 would encode it each time.
type listAnswer struct {
	*encodedList
	r *http.Request
}

func (a listAnswer) VisitListOrdersResponse(w http.ResponseWriter) error {
	w.Header().Set(ordersEventID, a.eventID)
	return a.write(w, a.r, echo.MIMEApplicationJSON, "")
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

// appendOrders writes the list as encoding/json writes []gen.Order, byte for byte (tested),
// without reflection: list readers wait while it runs (bench/notes.md).
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
