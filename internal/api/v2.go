package api

import (
	"bytes"
	"context"
	"errors"

	"github.com/petstore/orderd"
	"github.com/petstore/orderd/genv2"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/pagetoken"
)

var _ genv2.StrictServerInterface = (*ServerV2)(nil)

// ServerV2 implements the operations of openapi-v2.yaml: the find (find.go), one order, and
// version 1's cancel and document in version 2's types.
type ServerV2 struct {
	v1     *Server // the cancel, one rule for both versions
	finder order.Finder
	tokens *pagetoken.Codec
	pages  pageCache
}

// GetOrder answers the order with the id, or 404 order_not_found.
func (s *ServerV2) GetOrder(ctx context.Context, req genv2.GetOrderRequestObject) (genv2.GetOrderResponseObject, error) {
	o, err := s.finder.Get(ctx, req.OrderId)
	switch {
	case err == nil:
		return genv2.GetOrder200JSONResponse{Body: toAPIOrderV2(o)}, nil
	case errors.Is(err, order.ErrNotFound):
		return nil, orderError(req.OrderId, err) // 404, rendered by errorHandler
	}
	return nil, err
}

// CancelOrder cancels a pending order as version 1 does (Server.cancel).
func (s *ServerV2) CancelOrder(ctx context.Context, req genv2.CancelOrderRequestObject) (genv2.CancelOrderResponseObject, error) {
	if err := s.v1.cancel(ctx, req.OrderId); err != nil {
		return nil, err
	}
	return genv2.CancelOrder204Response{}, nil
}

// GetOpenAPIDocument serves openapi-v2.yaml as it is embedded in the binary.
func (s *ServerV2) GetOpenAPIDocument(context.Context, genv2.GetOpenAPIDocumentRequestObject) (genv2.GetOpenAPIDocumentResponseObject, error) {
	return genv2.GetOpenAPIDocument200ApplicationyamlResponse{
		Body:          bytes.NewReader(orderd.OpenAPIV2),
		ContentLength: int64(len(orderd.OpenAPIV2)),
	}, nil
}

// toAPIOrderV2 converts a domain order to version 2's type; the schema requires every field.
func toAPIOrderV2(o order.Order) genv2.Order {
	return genv2.Order{Complete: o.Complete, Id: o.ID, PetId: o.PetID, Quantity: o.Quantity,
		ShipDate: o.ShipDate.UTC(), Status: genv2.OrderStatus(o.Status)}
}
