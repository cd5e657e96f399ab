package redisstore_test

import (
	"testing"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/redistest"
)

func TestFindConformance(t *testing.T) {
	rdb := client(t, redistest.Start(t))
	ordertest.RunFind(t, func(tb testing.TB, orders []order.Order) ordertest.FinderStore { return newOrders(tb, rdb, orders) })
}
