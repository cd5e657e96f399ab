package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/redistest"
)

// TestKeysWithoutAGenerationAreNotKept: keys whose generation Redis lost have a version no
// round trip can confirm, so a key read then is answered and not kept, and the cache kept
// for an earlier version stays as it was.
func TestKeysWithoutAGenerationAreNotKept(t *testing.T) {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr})
	t.Cleanup(func() { rdb.Close() })
	p := redistest.Prefix(t)
	s, err := NewKeys(rdb, p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, k, err := order.NewKey("ops", order.Pro, order.Limits{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add(ctx, k); err != nil {
		t.Fatal(err)
	}
	if _, err := s.read(ctx, k.Hash); err != nil {
		t.Fatal(err)
	}
	before := s.at
	if before == 0 {
		t.Fatal("a key read at a version with a generation was not kept")
	}
	rdb.Del(ctx, "{"+p+":keys}:generation")
	if got, err := s.read(ctx, k.Hash); err != nil || got.Hash != k.Hash {
		t.Fatalf("read without a generation: %+v, %v", got, err)
	}
	if s.at != before {
		t.Fatalf("a key read without a generation replaced the cache: %v", s.at)
	}
}
