package sqlitestore_test

import (
	"testing"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/sqlitestore"
)

func TestFindConformance(t *testing.T) {
	ordertest.RunFind(t, func(tb testing.TB, orders []order.Order) order.Store {
		return sqlitestore.NewOrders(mustOpen(tb, newFile(tb, orders)))
	})
}
