package api

import (
	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/order"
)

// toAPIOrders converts domain orders to the generated type, with every field present (the
// schema marks none required, but clients rely on all six). Never nil: an empty list is [].
func toAPIOrders(orders []order.Order) []gen.Order {
	out := make([]gen.Order, len(orders))
	for i := range orders {
		o := &orders[i]
		ship := o.ShipDate.UTC()
		status := gen.OrderStatus(o.Status)
		out[i] = gen.Order{
			Id:       &o.ID,
			PetId:    &o.PetID,
			Quantity: &o.Quantity,
			ShipDate: &ship,
			Complete: &o.Complete,
			Status:   &status,
		}
	}
	return out
}

func toAPIPet(p order.Pet) gen.Pet {
	status := gen.PetStatus(p.Status)
	return gen.Pet{Id: &p.ID, Name: &p.Name, Status: &status}
}
