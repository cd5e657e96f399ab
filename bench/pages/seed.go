package main

import (
	"context"
	"fmt"
	"time"

	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/plan"
	"github.com/petstore/orderd/internal/service"
)

// firstShipDate is the ship date of the orders whose id is a multiple of shipDays; the others
// follow a day apart, so that each of the shipDays days holds 1 order in shipDays, spread
// evenly over the whole id range.
var firstShipDate = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const shipDays = 1000

// orderAt is the order with the given id (1 to n) of the bench's data: 89% pending, 10%
// shipped, 1% cancelled; ship dates cycling over shipDays days; pets cycling over 977.
func orderAt(id int64) order.Order {
	status := order.StatusPending
	switch {
	case id%10 == 0:
		status = order.StatusShipped
	case id%100 == 1:
		status = order.StatusCancelled
	}
	return order.Order{ID: id, PetID: 1000 + id%977, Quantity: int32(1 + id%9),
		ShipDate: firstShipDate.Add(time.Duration(id%shipDays) * 24 * time.Hour),
		Complete: status == order.StatusShipped, Status: status}
}

// seedBatch is how many orders one SQLite import transaction writes: large enough that
// the commits do not dominate, small enough that the bench's own heap stays small.
const seedBatch = 100_000

// seedTimeout bounds each Redis call of the seeding, as `orderd import --redis-timeout` would.
const seedTimeout = 30 * time.Second

// seed imports orders 1 to n into the stores of sc, as `orderd import` does, and returns a
// key without limits that matter, as `orderd keys create` makes. The SQLite file takes
// them in transactions of seedBatch; Redis in one Import, which writes in batches of its own
// and then rebuilds the indexes once (an Import per batch would rescan every order each time).
func seed(ctx context.Context, sc service.StoreConfig, n int) (string, error) {
	sc.CreateDB = true
	// An import's calls are larger than a request's: on a loaded machine one script of
	// 1000 orders may take longer than the bound of a request's call.
	sc.RedisTimeout = seedTimeout
	stores, err := service.OpenStores(sc)
	if err != nil {
		return "", err
	}
	defer stores.Close()
	batch := seedBatch
	if sc.Redis() {
		batch = n
	}
	for start := 1; start <= n; start += batch {
		orders := make([]order.Order, 0, min(batch, n-start+1))
		for id := start; id <= n && id < start+batch; id++ {
			orders = append(orders, orderAt(int64(id)))
		}
		if _, err := stores.Import(ctx, orders, nil); err != nil {
			return "", fmt.Errorf("importing orders %d to %d: %w", start, start+len(orders)-1, err)
		}
	}
	key, rec, err := auth.NewKey("pages", plan.Enterprise, plan.Limits{PerMinute: 1 << 40, PerDay: 1 << 40}, time.Now())
	if err != nil {
		return "", err
	}
	if err := stores.Keys.Add(ctx, rec); err != nil {
		return "", err
	}
	return key, nil
}
