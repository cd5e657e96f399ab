package redisstore

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/redistest"
)

// redisCPU is redis-server's CPU time so far (INFO cpu), for a per-operation figure that the
// machine's other load moves less than the wall clock.
func redisCPU(tb testing.TB, rdb *redis.Client) time.Duration {
	info, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		tb.Fatal(err)
	}
	var total float64
	for _, l := range strings.Split(info, "\r\n") {
		k, v, _ := strings.Cut(l, ":")
		if k == "used_cpu_sys" || k == "used_cpu_user" {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return time.Duration(total * float64(time.Second))
}

// evalshaUsec is the time redis-server has spent running EVALSHA so far (INFO
// commandstats), without the reading and writing around it.
func evalshaUsec(tb testing.TB, rdb *redis.Client) float64 {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	for _, l := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(l, "cmdstat_evalsha:"); ok {
			for _, kv := range strings.Split(rest, ",") {
				if v, ok := strings.CutPrefix(kv, "usec="); ok {
					f, _ := strconv.ParseFloat(v, 64)
					return f
				}
			}
		}
	}
	return 0
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// callers numbers the callers of BenchmarkHotPath/batched-distinct-callers.
var callers atomic.Uint64

// hotLimits are limits no benchmark reaches, so that every decision admits.
var hotLimits = order.Limits{PerMinute: 1 << 40, PerDay: 1 << 40}

// trivial is a script that does nothing: what any EVALSHA costs.
var trivial = redis.NewScript("return {1, 2, 3, 0}")

// BenchmarkHotPath is the round trip of an admitted list request (rate.lua with the reads of
// both versions) from many goroutines at once, sent in each of the ways below (one pipeline
// each, its parts alone, through the batcher); besides ns/op it reports the CPU time per
// operation of this process and of redis-server.
func BenchmarkHotPath(b *testing.B) {
	srv := redistest.Start(b)
	k, _ := newNames("bench")
	keys := []string{"{bench:rl:key:hot}"}
	// rate.lua's arguments for one request under hotLimits, as send orders them, written
	// out as constants: the one-pipeline figures in docs/benchmarks.md were measured so.
	args := func() []any {
		return []any{int64(1 << 40), int64(1 << 40), 0, 0, 0, strconv.FormatInt(time.Now().UnixMilli(), 10)}
	}
	for _, v := range []struct {
		name string
		run  func(ctx context.Context, c *redis.Client, l *Limiter) error
	}{
		{"pipelined", func(ctx context.Context, c *redis.Client, _ *Limiter) error {
			var cmd *redis.Cmd
			_, _ = c.Pipelined(ctx, func(p redis.Pipeliner) error {
				cmd = rateScript.EvalSha(ctx, p, keys, args()...)
				p.MGet(ctx, k.ordersVersion...)
				p.MGet(ctx, k.keysVersion...)
				return nil
			})
			return cmd.Err()
		}},
		{"mgetonly", func(ctx context.Context, c *redis.Client, _ *Limiter) error {
			_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
				p.MGet(ctx, k.ordersVersion...)
				p.MGet(ctx, k.keysVersion...)
				return nil
			})
			return err
		}},
		{"evalonly", func(ctx context.Context, c *redis.Client, _ *Limiter) error {
			return rateScript.EvalSha(ctx, c, keys, args()...).Err()
		}},
		{"trivialeval", func(ctx context.Context, c *redis.Client, _ *Limiter) error {
			return trivial.EvalSha(ctx, c, keys, args()...).Err()
		}},
		{"batched", func(ctx context.Context, c *redis.Client, l *Limiter) error {
			// what a request sends: one caller's decisions share pipelines and script calls
			_, err := l.Allow(order.Begin(ctx), "key:hot", hotLimits)
			return err
		}},
		{"batched-distinct-callers", func(ctx context.Context, c *redis.Client, l *Limiter) error {
			// the same, each request from a caller of its own: one script call each
			_, err := l.Allow(order.Begin(ctx), "key:"+strconv.FormatUint(callers.Add(1), 10), hotLimits)
			return err
		}},
	} {
		b.Run(v.name, func(b *testing.B) {
			c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
			defer c.Close()
			l, err := NewLimiter(c, LimiterOptions{Prefix: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			rateScript.Load(ctx, c)
			trivial.Load(ctx, c)
			b.SetParallelism(16)
			b.ReportAllocs()
			r0, s0, e0 := redisCPU(b, c), selfCPU(), evalshaUsec(b, c)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					cctx, cancel := callContext(ctx, time.Second)
					if err := v.run(cctx, c, l); err != nil {
						b.Error(err)
						cancel()
						return
					}
					cancel()
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(redisCPU(b, c)-r0)/float64(b.N)/1e3, "redis-µs/op")
			b.ReportMetric((evalshaUsec(b, c)-e0)/float64(b.N), "evalsha-µs/op")
			b.ReportMetric(float64(selfCPU()-s0)/float64(b.N)/1e3, "self-µs/op")
		})
	}
}
