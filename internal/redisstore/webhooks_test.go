package redisstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
	"github.com/petstore/orderd/internal/webhook"
	"github.com/petstore/orderd/internal/webhook/webhooktest"
)

func TestWebhooksConformance(t *testing.T) {
	rdb := client(t, redistest.Start(t))
	webhooktest.Run(t, func(tb testing.TB) webhook.Store {
		s, err := redisstore.NewWebhooks(rdb, redistest.Prefix(tb), time.Second)
		if err != nil {
			tb.Fatal(err)
		}
		return s
	})
}

// TestWebhooksNowIsRedisClock: the leases' clock is Redis's TIME, to the microsecond, read on a
// cluster too (the script names a key, so that it runs on the endpoints' node).
func TestWebhooksNowIsRedisClock(t *testing.T) {
	cluster, err := redisstore.Open(redistest.StartCluster(t).URL(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cluster.Close() })
	for _, rdb := range []redis.UniversalClient{client(t, redistest.Start(t)), cluster} {
		s, err := redisstore.NewWebhooks(rdb, redistest.Prefix(t), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		before := rdb.Time(t.Context()).Val()
		now, err := s.Now(t.Context())
		after := rdb.Time(t.Context()).Val()
		if err != nil || before.IsZero() || now.Before(before) || now.After(after) {
			t.Fatalf("Now = %s, %v; want between Redis's %s and %s", now, err, before, after)
		}
	}
}

// TestACorruptWebhookIsRefusedButCanBeDeleted: an endpoint's hash that cannot be read (written
// by hand) is reported as corrupt, is never written over, and can still be deleted.
func TestACorruptWebhookIsRefusedButCanBeDeleted(t *testing.T) {
	ctx, rdb, prefix := t.Context(), client(t, redistest.Start(t)), redistest.Prefix(t)
	s, err := redisstore.NewWebhooks(rdb, prefix, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	key := "{" + prefix + ":webhooks}:endpoint:wh_bad"
	if err := rdb.HSet(ctx, key, "url", "https://a.example/", "created", "yesterday").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ZAdd(ctx, "{"+prefix+":webhooks}:ids", redis.Z{Member: "wh_bad"}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(ctx); !errors.Is(err, order.ErrCorrupt) {
		t.Fatalf("List: %v; want ErrCorrupt", err)
	}
	if _, err := webhook.Lease(ctx, s, "wh_bad", "one", time.Minute, time.Now()); !errors.Is(err, order.ErrCorrupt) {
		t.Fatalf("Lease: %v; want ErrCorrupt", err)
	}
	if got := rdb.HGet(ctx, key, "created").Val(); got != "yesterday" {
		t.Fatalf("the corrupt hash was written over: created %q", got)
	}
	if err := webhook.Delete(ctx, s, "wh_bad"); err != nil {
		t.Fatal(err)
	}
	if list, err := s.List(ctx); err != nil || len(list) != 0 || rdb.Exists(ctx, key).Val() != 0 {
		t.Fatalf("after Delete: %v, %v", list, err)
	}
}
