package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/plan"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
	"github.com/petstore/orderd/internal/store"
)

// TestALostReplyIsNotSentAgain: when the connection breaks after Redis ran a batch (its
// reply lost on the way back), the decisions are not sent again, so no caller is counted
// twice; the request fails as an outage instead. It runs on the client the service opens,
// and on a Cluster client with go-redis's defaults (which resends a pipeline on another
// attempt whatever MaxRetries says): the batch itself refuses to be sent twice.
func TestALostReplyIsNotSentAgain(t *testing.T) {
	srv := redistest.Start(t)
	cut := srv.Cutter(t)
	for _, tc := range []struct {
		name string
		open func(t *testing.T) redis.UniversalClient
	}{
		{"Open", func(t *testing.T) redis.UniversalClient {
			rdb, err := redisstore.Open("redis://"+cut.Addr, 2*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			return rdb
		}},
		{"go-redis defaults", func(t *testing.T) redis.UniversalClient {
			return redis.NewClient(&redis.Options{Addr: cut.Addr})
		}},
		{"Cluster", func(t *testing.T) redis.UniversalClient {
			// One node that owns every slot: a plain redis-server behind the proxy.
			return redis.NewClusterClient(&redis.ClusterOptions{
				ClusterSlots: func(context.Context) ([]redis.ClusterSlot, error) {
					return []redis.ClusterSlot{{Start: 0, End: 16383, Nodes: []redis.ClusterNode{{Addr: cut.Addr}}}}, nil
				},
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb := tc.open(t)
			t.Cleanup(func() { rdb.Close() })
			l, err := redisstore.NewLimiter(rdb, redisstore.LimiterOptions{Prefix: redistest.Prefix(t), Timeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			limits := plan.Limits{PerMinute: 100, PerDay: 1000}
			ctx := store.Begin(context.Background()) // the decision with the reads of the versions
			if _, err := l.Allow(ctx, "key:loader", limits); err != nil {
				t.Fatal(err) // loads rate.lua, so that the next decision is one EVALSHA
			}
			before := cut.Cuts()
			cut.Cut("evalsha")
			_, err = l.Allow(store.Begin(context.Background()), "key:a", limits)
			if cut.Cuts() != before+1 {
				t.Fatal("the proxy cut nothing")
			}
			if !errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("the decision whose reply was lost: %v; want an outage", err)
			}
			d, err := l.Allow(context.Background(), "key:a", limits)
			if err != nil {
				t.Fatal(err)
			}
			// One count for the decision that ran once, whose reply was lost, and this one.
			if used := limits.PerMinute - d.Minute.Remaining; used != 2 {
				t.Fatalf("the caller was counted %d times for two decisions", used)
			}
		})
	}
}

// TestALostWriteReplyIsNotSentAgain: the same for a write outside the batch: adding a key
// whose reply is lost fails as an outage, and is not run again (which would answer that the
// name is taken, by the key the first run added).
func TestALostWriteReplyIsNotSentAgain(t *testing.T) {
	srv := redistest.Start(t)
	cut := srv.Cutter(t)
	rdb, err := redisstore.Open("redis://"+cut.Addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	keys, err := redisstore.NewKeys(rdb, redistest.Prefix(t), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, first, _ := auth.NewKey("first", plan.Free, plan.Limits{}, time.Now())
	if err := keys.Add(ctx, first); err != nil {
		t.Fatal(err) // loads the script, so that the next Add is one EVALSHA
	}
	_, k, _ := auth.NewKey("second", plan.Free, plan.Limits{}, time.Now())
	cut.Cut("evalsha")
	if err := keys.Add(ctx, k); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("the Add whose reply was lost: %v; want an outage", err)
	}
	if cut.Cuts() != 1 {
		t.Fatal("the proxy cut nothing")
	}
	all, err := keys.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 {
		t.Fatalf("%d keys; want both (the lost reply's key was added once)", len(all))
	}
}
