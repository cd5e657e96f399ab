//go:build million

package redisstore

import (
	"context"
	"testing"
	"time"
)

// TestListHoldsRedisBriefly: no command of the list of a million orders runs 10 ms or more
// in Redis (its SLOWLOG stays empty). Run on a quiet machine: a command's time in SLOWLOG is
// wall time, which another process on the same cores lengthens.
//
//	go test -tags million -run TestListHoldsRedisBriefly ./internal/redisstore
func TestListHoldsRedisBriefly(t *testing.T) {
	const n = 1_000_000
	s := manyOrders(t, n)
	ctx := context.Background()
	if err := s.rdb.ConfigSet(ctx, "slowlog-log-slower-than", "10000").Err(); err != nil {
		t.Fatal(err)
	}
	s.rdb.SlowLogReset(ctx)
	start := time.Now()
	list, err := s.List(ctx)
	t.Logf("listed %d orders in %v", len(list), time.Since(start))
	if err != nil || len(list) != n {
		t.Fatalf("List = %d orders, %v; want %d", len(list), err, n)
	}
	if slow, err := s.rdb.SlowLogGet(ctx, 10).Result(); err != nil || len(slow) > 0 {
		t.Fatalf("commands of 10 ms or more: %+v (%v)", slow, err)
	}
}
