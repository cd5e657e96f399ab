// Package api is the HTTP face of the service: the operations of each version (openapi.yaml
// at /v1, openapi-v2.yaml at /v2), the middleware in front of them, and the one place that
// turns errors into Error objects.
package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/petstore/orderd"
	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/order"
)

var _ gen.StrictServerInterface = (*Server)(nil)

// Server implements the operations of openapi.yaml on the domain's stores.
type Server struct {
	orders order.Store
	lists  *listCache
	pets   order.PetStore
	sunset Sunset
	now    func() time.Time
	obs    Observer
}

// CancelOrder cancels a pending order (see cancel). A refusal (404, 409) is returned as an
// error, which errorHandler renders like every other Error answer.
func (s *Server) CancelOrder(ctx context.Context, req gen.CancelOrderRequestObject) (gen.CancelOrderResponseObject, error) {
	if err := s.cancel(ctx, req.OrderId); err != nil {
		return nil, err
	}
	return gen.CancelOrder204Response{}, nil
}

// cancel is every version's cancel (order.Order.Cancel has the rule), its outcome counted. nil
// means 204: cancelled now, or already. A refusal names the order; else the store failed.
func (s *Server) cancel(ctx context.Context, id int64) error {
	_, changed, err := s.orders.Cancel(ctx, id)
	switch {
	case err == nil && changed:
		s.obs.Cancel("cancelled")
		return nil
	case err == nil:
		s.obs.Cancel("already_cancelled")
		return nil
	case errors.Is(err, order.ErrNotFound):
		s.obs.Cancel("not_found")
		return orderError(id, err)
	case errors.Is(err, order.ErrAlreadyShipped):
		s.obs.Cancel("shipped")
		return orderError(id, err)
	}
	s.obs.Cancel("error")
	return err
}

// GetOpenAPIDocument serves openapi.yaml as it is embedded in the binary.
func (s *Server) GetOpenAPIDocument(context.Context, gen.GetOpenAPIDocumentRequestObject) (gen.GetOpenAPIDocumentResponseObject, error) {
	return gen.GetOpenAPIDocument200ApplicationyamlResponse{
		Body:          bytes.NewReader(orderd.OpenAPI),
		ContentLength: int64(len(orderd.OpenAPI)),
	}, nil
}

// GetPetById answers a pet until the sunset date, and 410 from then on. The declared
// Deprecation, Sunset and Link headers are left zero: writeHeaders writes them.
func (s *Server) GetPetById(ctx context.Context, req gen.GetPetByIdRequestObject) (gen.GetPetByIdResponseObject, error) {
	if s.sunset.Passed(s.now()) {
		return nil, errSunset
	}
	p, err := s.pets.Pet(ctx, req.PetId)
	switch {
	case err == nil:
		return gen.GetPetById200JSONResponse{Body: toAPIPet(p)}, nil
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

// orderError is a refusal about one order, as its answer's message says it: "order 10: …".
func orderError(id int64, err error) error { return fmt.Errorf("order %d: %w", id, err) }

// toAPIPet converts a domain pet to the generated type; the schema requires every field.
func toAPIPet(p order.Pet) gen.Pet {
	return gen.Pet{Id: p.ID, Name: p.Name, Status: gen.PetStatus(p.Status)}
}
