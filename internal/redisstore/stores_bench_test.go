package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
)

func benchStore(b *testing.B, n int) (*redisstore.Orders, context.Context) {
	rdb := client(b, redistest.Start(b))
	list := make([]order.Order, n)
	for i := range list {
		list[i] = order.Order{ID: int64(i), PetID: int64(i), Quantity: 1, ShipDate: time.Unix(1.8e9, 0), Status: order.StatusShipped}
	}
	return newOrders(b, rdb, list), context.Background()
}

func BenchmarkOrdersList100(b *testing.B) {
	s, ctx := benchStore(b, 100)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ordertest.Fresh(s).List(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVersion(b *testing.B) {
	s, ctx := benchStore(b, 100)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Version(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOrdersCancelShipped(b *testing.B) {
	s, ctx := benchStore(b, 100)
	b.ReportAllocs()
	for b.Loop() {
		s.Cancel(ctx, 50)
	}
}
