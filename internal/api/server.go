package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/petstore/orderd"
	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/genv2"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/pagetoken"
)

var _ gen.StrictServerInterface = (*Server)(nil)
var _ genv2.StrictServerInterface = (*ServerV2)(nil)

// Server implements the operations of openapi.yaml on the domain's stores; the list is in list.go.
type Server struct {
	orders *order.View
	lists  *listCache
	pets   order.PetStore
	sunset Sunset
	now    func() time.Time
	obs    Observer
}

// ServerV2 implements the operations of openapi-v2.yaml; the find is in find.go, the events in
// events.go.
type ServerV2 struct {
	v1      *Server // the orders, and the cancel, one rule for both versions
	tokens  *pagetoken.Codec
	pages   pageCache
	events  order.EventLog
	streams *streams
}

// CancelOrder cancels a pending order; a refusal (404, 409) is an error for errorHandler.
func (s *Server) CancelOrder(ctx context.Context, req gen.CancelOrderRequestObject) (gen.CancelOrderResponseObject, error) {
	if err := s.cancel(ctx, req.OrderId); err != nil {
		return nil, err
	}
	return gen.CancelOrder204Response{}, nil
}

// CancelOrder cancels a pending order as version 1 does.
func (s *ServerV2) CancelOrder(ctx context.Context, req genv2.CancelOrderRequestObject) (genv2.CancelOrderResponseObject, error) {
	if err := s.v1.cancel(ctx, req.OrderId); err != nil {
		return nil, err
	}
	return genv2.CancelOrder204Response{}, nil
}

// cancel is every version's cancel, its outcome counted; nil (204): cancelled now or already.
func (s *Server) cancel(ctx context.Context, id int64) error {
	_, changed, err := s.orders.Cancel(ctx, id)
	switch {
	case err == nil && changed:
		s.obs.Cancel("cancelled")
		s.obs.Event(string(order.EventCancelled)) // the store recorded it with the change
	case err == nil:
		s.obs.Cancel("already_cancelled")
	case errors.Is(err, order.ErrNotFound):
		s.obs.Cancel("not_found")
		return orderError(id, err)
	case errors.Is(err, order.ErrAlreadyShipped):
		s.obs.Cancel("shipped")
		return orderError(id, err)
	case !requestEnded(ctx, err): // a client that hung up is no failed cancel
		s.obs.Cancel("error")
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

// GetOpenAPIDocument serves openapi.yaml as it is embedded in the binary.
func (s *Server) GetOpenAPIDocument(ctx context.Context, _ gen.GetOpenAPIDocumentRequestObject) (gen.GetOpenAPIDocumentResponseObject, error) {
	return documentAnswer{documents[0], exchangeOf(ctx).req}, nil
}

// GetOpenAPIDocument serves openapi-v2.yaml as it is embedded in the binary.
func (s *ServerV2) GetOpenAPIDocument(ctx context.Context, _ genv2.GetOpenAPIDocumentRequestObject) (genv2.GetOpenAPIDocumentResponseObject, error) {
	return documentAnswer{documents[1], exchangeOf(ctx).req}, nil
}

// documents are both versions', gzipped once.
var documents = [...]*encoded{newFile(orderd.OpenAPI), newFile(orderd.OpenAPIV2)}

type documentAnswer struct {
	*encoded
	r *http.Request
}

func (a documentAnswer) VisitGetOpenAPIDocumentResponse(w http.ResponseWriter) error {
	return a.write(w, a.r, "application/yaml", "")
}

// petRoute is the deprecated operation's route, whose every answer is marked (observe.go).
const petRoute = BasePath + "/pets/:petId"

var errSunset = errors.New("GET /pets/{petId} was retired on its sunset date; see the Link header")

// GetPetById answers a pet until the sunset date, then 410.
func (s *Server) GetPetById(ctx context.Context, req gen.GetPetByIdRequestObject) (gen.GetPetByIdResponseObject, error) {
	if s.sunset.Passed(s.now()) {
		return nil, errSunset
	}
	p, err := s.pets.Pet(ctx, req.PetId)
	switch {
	case err == nil:
		return gen.GetPetById200JSONResponse{Body: gen.Pet{Id: p.ID, Name: p.Name, Status: gen.PetStatus(p.Status)}}, nil
	case errors.Is(err, order.ErrPetNotFound):
		return nil, fmt.Errorf("pet %d: %w", req.PetId, err)
	}
	return nil, err
}

// Sunset is the schedule of the deprecated pets operation.
type Sunset struct {
	DeprecatedAt time.Time
	SunsetAt     time.Time
	Link         string // migration notes
}

// Passed reports whether the operation is retired at now.
func (s *Sunset) Passed(now time.Time) bool { return !now.Before(s.SunsetAt) }
