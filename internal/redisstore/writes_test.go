package redisstore_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
)

// TestAWriteThatCannotFinishWritesNothing: Redis does not undo a script's writes when a later
// command of it fails. A key that another writer left in a form a script cannot write (a
// string where a stream or a hash belongs, a counter that is no number) fails the script
// before its first write: the change is refused as a corrupt record, and neither the data
// nor the version moved.
func TestAWriteThatCannotFinishWritesNothing(t *testing.T) {
	ctx := context.Background()
	rdb := client(t, redistest.Start(t))
	corrupt := func(t *testing.T, key, value string) {
		t.Helper()
		if err := rdb.Set(ctx, key, value, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	wantCorrupt := func(t *testing.T, err error) {
		t.Helper()
		if !errors.Is(err, order.ErrCorrupt) {
			t.Fatalf("err %v; want order.ErrCorrupt", err)
		}
	}
	// keysAt is the key store under prefix p, and opsKey a new key named ops.
	keysAt := func(t *testing.T, p string) *redisstore.Keys {
		t.Helper()
		s, err := redisstore.NewKeys(rdb, p, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	opsKey := func(t *testing.T) order.Key {
		t.Helper()
		_, k, err := order.NewKey("ops", order.Pro, order.Limits{}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	same := func(t *testing.T, key, want string) {
		t.Helper()
		got, err := rdb.Get(ctx, key).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("%s is %q after the refused write; want %q", key, got, want)
		}
	}

	for _, broken := range []struct{ key, value string }{
		{":events", "not a stream"},
		{":version", "not a number"},
	} {
		t.Run("Cancel"+broken.key, func(t *testing.T) {
			p := redistest.Prefix(t)
			s := ordersWithPrefix(t, rdb, p)
			id := pendingID(t, s)
			orders := "{" + p + ":orders}"
			corrupt(t, orders+broken.key, broken.value)
			version, _ := rdb.Get(ctx, orders+":version").Result()
			generation, _ := rdb.Get(ctx, orders+":generation").Result()

			_, _, err := s.Cancel(ctx, id)
			wantCorrupt(t, err)
			if status, err := rdb.HGet(ctx, orders+":status", strconv.FormatInt(id, 10)).Result(); err != nil || status != "pending" {
				t.Fatalf("status %q, %v after the refused cancel; want pending", status, err)
			}
			same(t, orders+":version", version)
			same(t, orders+":generation", generation)
		})
	}

	for _, broken := range []struct{ key, value string }{
		{":status", "not a hash"},
		{":events", "not a stream"},
		{":version", "not a number"},
	} {
		t.Run("Import"+broken.key, func(t *testing.T) {
			p := redistest.Prefix(t)
			orders := "{" + p + ":orders}"
			corrupt(t, orders+broken.key, broken.value)
			s, err := redisstore.NewOrders(rdb, p, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Import(ctx, ordertest.Fixture())
			wantCorrupt(t, err)
			if n, err := rdb.HLen(ctx, orders+":data").Result(); err != nil || n != 0 {
				t.Fatalf("%d orders' data written by the refused import (%v)", n, err)
			}
			same(t, orders+":generation", "")
		})
	}

	for _, broken := range []struct{ key, value string }{
		{":by-hash", "not a hash"},
		{":version", "not a number"},
	} {
		t.Run("AddKey"+broken.key, func(t *testing.T) {
			p := redistest.Prefix(t)
			keys := "{" + p + ":keys}"
			corrupt(t, keys+broken.key, broken.value)
			wantCorrupt(t, keysAt(t, p).Add(ctx, opsKey(t)))
			if n, err := rdb.HLen(ctx, keys+":by-name").Result(); err != nil || n != 0 {
				t.Fatalf("%d names written by the refused add (%v)", n, err)
			}
			same(t, keys+":generation", "")
		})
	}

	t.Run("RevokeKey:version", func(t *testing.T) {
		p := redistest.Prefix(t)
		keys := "{" + p + ":keys}"
		s := keysAt(t, p)
		if err := s.Add(ctx, opsKey(t)); err != nil {
			t.Fatal(err)
		}
		generation, _ := rdb.Get(ctx, keys+":generation").Result()
		corrupt(t, keys+":version", "not a number")
		_, err := s.Revoke(ctx, "ops")
		wantCorrupt(t, err)
		if n, err := rdb.HLen(ctx, keys+":by-name").Result(); err != nil || n != 1 {
			t.Fatalf("%d names left after the refused revoke (%v); want the key's", n, err)
		}
		same(t, keys+":generation", generation)
	})
}
