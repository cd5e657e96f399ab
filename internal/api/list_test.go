package api

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/order"
)

// TestAppendOrdersEncodesAsTheGeneratedType: the hand-written encoder writes what
// encoding/json writes for the generated gen.Order, for edge values and random ones.
func TestAppendOrdersEncodesAsTheGeneratedType(t *testing.T) {
	zone := time.FixedZone("X", -7*3600)
	orders := []order.Order{
		{ID: 0, PetID: 0, Quantity: 0, ShipDate: time.Time{}, Status: order.StatusPending},
		{ID: math.MaxInt64, PetID: math.MaxInt64 - 1, Quantity: math.MaxInt32, ShipDate: time.Date(2026, 1, 2, 3, 4, 5, 600, zone), Complete: true, Status: order.StatusShipped},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		orders = append(orders, order.Order{
			ID: r.Int64(), PetID: r.Int64(), Quantity: r.Int32(),
			ShipDate: time.Unix(r.Int64N(1<<34), r.Int64N(1e9)), Complete: r.IntN(2) == 1,
			Status: []order.Status{order.StatusPending, order.StatusShipped, order.StatusCancelled}[r.IntN(3)],
		})
	}
	want, err := json.Marshal(toAPIOrders(orders))
	if err != nil {
		t.Fatal(err)
	}
	got := appendOrders(nil, orders)
	if string(got) != string(want)+"\n" {
		t.Fatalf("encodings differ:\n got %.300s\nwant %.300s", got, want)
	}
	if string(appendOrders(nil, nil)) != "[]\n" {
		t.Fatal("an empty list is not []")
	}
}

// toAPIOrders converts domain orders to the generated type, every field present: what the
// generated 200 response would encode, and so the reference for appendOrders.
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
