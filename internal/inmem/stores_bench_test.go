package inmem_test

import (
	"context"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/inmem"
	"github.com/petstore/orderd/internal/order"
)

func benchOrders(n int) []order.Order {
	out := make([]order.Order, n)
	for i := range out {
		out[i] = order.Order{ID: int64(i), PetID: int64(i), Quantity: 1, ShipDate: time.Unix(1.8e9, 0), Status: order.StatusShipped}
	}
	return out
}

func BenchmarkOrdersList100(b *testing.B) {
	s, _ := inmem.NewOrders(benchOrders(100))
	b.ReportAllocs()
	for b.Loop() {
		s.List(context.Background())
	}
}

func BenchmarkOrdersCancelShipped(b *testing.B) {
	s, _ := inmem.NewOrders(benchOrders(100))
	b.ReportAllocs()
	for b.Loop() {
		s.Cancel(context.Background(), 50)
	}
}
