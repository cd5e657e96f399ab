package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit/ratelimittest"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
)

// TestALostReplyIsNotSentAgain: when the connection breaks after Redis ran a batch (its
// reply lost on the way back), the decisions are not sent again, so no caller is counted
// twice; the request fails as an outage instead. Nor is the EVAL that follows a NOSCRIPT.
// It runs on every client of lossyClients: the batch itself refuses to be sent twice.
func TestALostReplyIsNotSentAgain(t *testing.T) {
	srv := redistest.Start(t)
	cut := srv.Cutter(t)
	for _, tc := range lossyClients(cut) {
		for _, marker := range []string{"evalsha", "eval"} {
			t.Run(tc.name+", "+marker, func(t *testing.T) {
				srv.MustDo(t, "SCRIPT", "FLUSH")
				// A clock that stands still: the count checked below never meets a minute's end.
				clock := ratelimittest.NewClock(time.Date(2026, 11, 23, 10, 0, 30, 0, time.UTC))
				l, err := redisstore.NewLimiter(tc.open(t), redisstore.LimiterOptions{Prefix: redistest.Prefix(t), Clock: clock.Now, Timeout: 2 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				limits := order.Limits{PerMinute: 100, PerDay: 1000}
				if marker == "evalsha" {
					if _, err := l.Allow(order.Begin(context.Background()), "key:loader", limits); err != nil {
						t.Fatal(err) // loads rate.lua, so that the next decision is one EVALSHA
					}
				}
				before := cut.Cuts()
				// The batch's EVALSHA, or the EVAL sent after its NOSCRIPT (RESP: "$4\r\neval\r\n").
				cut.Cut(map[string]string{"evalsha": "evalsha", "eval": "\r\neval\r\n"}[marker])
				// The decision with the reads of the versions, as within a request.
				_, err = l.Allow(order.Begin(context.Background()), "key:a", limits)
				if cut.Cuts() != before+1 {
					t.Fatal("the proxy cut nothing")
				}
				if !errors.Is(err, order.ErrUnavailable) {
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
}

// lossyClients open clients through cut: the one the service opens, one with go-redis's
// defaults (which resends a failed call up to three times), and a Cluster client with
// go-redis's defaults (which resends on its redirect loop whatever MaxRetries says), on one
// node that owns every slot: the redis-server behind cut.
func lossyClients(cut *redistest.Cutter) []struct {
	name string
	open func(t *testing.T) redis.UniversalClient
} {
	closing := func(t *testing.T, rdb redis.UniversalClient) redis.UniversalClient {
		t.Cleanup(func() { rdb.Close() })
		return rdb
	}
	return []struct {
		name string
		open func(t *testing.T) redis.UniversalClient
	}{
		{"Open", func(t *testing.T) redis.UniversalClient {
			rdb, err := redisstore.Open("redis://"+cut.Addr, 2*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			return closing(t, rdb)
		}},
		{"go-redis defaults", func(t *testing.T) redis.UniversalClient {
			return closing(t, redis.NewClient(&redis.Options{Addr: cut.Addr}))
		}},
		{"Cluster", func(t *testing.T) redis.UniversalClient {
			return closing(t, redis.NewClusterClient(&redis.ClusterOptions{
				ClusterSlots: func(context.Context) ([]redis.ClusterSlot, error) {
					return []redis.ClusterSlot{{Start: 0, End: 16383, Nodes: []redis.ClusterNode{{Addr: cut.Addr}}}}, nil
				},
			}))
		}},
	}
}

// TestALostWriteReplyIsNotSentAgain: the same for the scripts that write alone: adding a key
// whose reply is lost fails as an outage, and is not run again (which would answer that the
// name is taken, by the key the first run added); nor is the EVAL that loads a script.
func TestALostWriteReplyIsNotSentAgain(t *testing.T) {
	srv := redistest.Start(t)
	cut := srv.Cutter(t)
	for _, tc := range lossyClients(cut) {
		for _, marker := range []string{"evalsha", "eval"} {
			t.Run(tc.name+", "+marker, func(t *testing.T) {
				srv.MustDo(t, "SCRIPT", "FLUSH")
				keys, err := redisstore.NewKeys(tc.open(t), redistest.Prefix(t), 2*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				if marker == "evalsha" {
					_, first, _ := order.NewKey("first", order.Free, order.Limits{}, time.Now())
					if err := keys.Add(ctx, first); err != nil {
						t.Fatal(err) // loads the script, so that the next Add is one EVALSHA
					}
				}
				before := cut.Cuts()
				_, k, _ := order.NewKey("second", order.Free, order.Limits{}, time.Now())
				// The EVALSHA, or the EVAL sent after its NOSCRIPT (RESP: "$4\r\neval\r\n").
				cut.Cut(map[string]string{"evalsha": "evalsha", "eval": "\r\neval\r\n"}[marker])
				if err := keys.Add(ctx, k); !errors.Is(err, order.ErrUnavailable) {
					t.Fatalf("the Add whose reply was lost: %v; want an outage", err)
				}
				if cut.Cuts() != before+1 {
					t.Fatal("the proxy cut nothing")
				}
				all, err := keys.List(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if got := len(all); got != map[string]int{"evalsha": 2, "eval": 1}[marker] {
					t.Fatalf("%d keys; the lost reply's key should have been added once", got)
				}
			})
		}
	}
}
