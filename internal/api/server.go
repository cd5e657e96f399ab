// Package api is the HTTP face of the service: the strict-server implementation of the
// operations in openapi.yaml, the middleware chain in front of it, and the one place that
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

// CancelOrder cancels a pending order; see order.Order.Cancel for the rule.
func (s *Server) CancelOrder(ctx context.Context, req gen.CancelOrderRequestObject) (gen.CancelOrderResponseObject, error) {
	_, changed, err := s.orders.Cancel(ctx, req.OrderId)
	switch {
	case err == nil && changed:
		s.obs.Cancel("cancelled")
		return gen.CancelOrder204Response{}, nil
	case err == nil:
		s.obs.Cancel("already_cancelled")
		return gen.CancelOrder204Response{}, nil
	case errors.Is(err, order.ErrNotFound):
		s.obs.Cancel("not_found")
		body := errorBody(fmt.Errorf("order %d: %w", req.OrderId, err))
		return gen.CancelOrder404JSONResponse{OrderNotFoundJSONResponse: gen.OrderNotFoundJSONResponse{Body: body}}, nil
	case errors.Is(err, order.ErrAlreadyShipped):
		s.obs.Cancel("shipped")
		body := errorBody(fmt.Errorf("order %d: %w", req.OrderId, err))
		return gen.CancelOrder409JSONResponse{OrderAlreadyShippedJSONResponse: gen.OrderAlreadyShippedJSONResponse{Body: body}}, nil
	}
	s.obs.Cancel("error")
	return nil, err
}

// GetOpenAPIDocument serves openapi.yaml as it is embedded in the binary.
func (s *Server) GetOpenAPIDocument(context.Context, gen.GetOpenAPIDocumentRequestObject) (gen.GetOpenAPIDocumentResponseObject, error) {
	return gen.GetOpenAPIDocument200ApplicationyamlResponse{
		Body:          bytes.NewReader(orderd.OpenAPI),
		ContentLength: int64(len(orderd.OpenAPI)),
	}, nil
}

// GetPetById answers a pet until the sunset date, and 410 from then on. The declared
// Deprecation, Sunset and Link headers are left zero here, like the rate-limit ones: observe's
// header hook writes them on every answer of the route, these and the errors alike.
func (s *Server) GetPetById(ctx context.Context, req gen.GetPetByIdRequestObject) (gen.GetPetByIdResponseObject, error) {
	if s.sunset.Passed(s.now()) {
		return gen.GetPetById410JSONResponse{EndpointSunsetJSONResponse: gen.EndpointSunsetJSONResponse{Body: errorBody(errSunset)}}, nil
	}
	p, err := s.pets.Pet(ctx, req.PetId)
	switch {
	case err == nil:
		return gen.GetPetById200JSONResponse{Body: toAPIPet(p)}, nil
	case errors.Is(err, order.ErrPetNotFound):
		body := errorBody(fmt.Errorf("pet %d: %w", req.PetId, err))
		return gen.GetPetById404JSONResponse{PetNotFoundJSONResponse: gen.PetNotFoundJSONResponse{Body: body}}, nil
	}
	return nil, err
}
