package redisstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/redistest"
)

// TestRevokeTakesOnlyTheKeyItFound: Revoke finds the key in one read and revokes it in a
// script of its own. When the key found was revoked in between and its name given to a new
// key, the script finds the name naming another key: it answers ErrKeyNotFound and the new
// key stays.
func TestRevokeTakesOnlyTheKeyItFound(t *testing.T) {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr})
	t.Cleanup(func() { rdb.Close() })
	s, err := NewKeys(rdb, redistest.Prefix(t), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	newKey := func() order.Key {
		_, k, err := order.NewKey("ops", order.Pro, order.Limits{}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Add(ctx, k); err != nil {
			t.Fatal(err)
		}
		return k
	}
	found := newKey()
	if _, err := s.Revoke(ctx, "ops"); err != nil {
		t.Fatal(err)
	}
	again := newKey()

	if _, err := s.revoke(ctx, found); !errors.Is(err, order.ErrKeyNotFound) {
		t.Fatalf("revoking the key found, since replaced: %v; want ErrKeyNotFound", err)
	}
	if k, err := s.Lookup(ctx, again.Hash); err != nil || k.Hash != again.Hash {
		t.Fatalf("the new key named ops: %+v, %v; want it kept", k, err)
	}
	if k, err := s.revoke(ctx, again); err != nil || k.Hash != again.Hash {
		t.Fatalf("revoking the key the name names: %+v, %v", k, err)
	}
}

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
	if before == "" {
		t.Fatal("a key read at a version with a generation was not kept")
	}
	rdb.Del(ctx, "{"+p+":keys}:generation")
	if got, err := s.read(ctx, k.Hash); err != nil || got.Hash != k.Hash {
		t.Fatalf("read without a generation: %+v, %v", got, err)
	}
	if s.at != before {
		t.Fatalf("a key read without a generation replaced the cache: %q", s.at)
	}
}
