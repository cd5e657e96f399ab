package redisstore

import (
	"context"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/redistest"
)

// TestOneCallDecidesAsOneCallEach: rate.lua deciding several requests in one call (as a
// batch sends one caller's requests) answers each request, and leaves the caller's hash and
// its expiry, exactly as one call per request does. Random runs of requests cross minutes,
// days, first 429s, too-early requests, bans and their ends, with times that step back now
// and then (the queue's order is not quite the clocks' order), in calls of random sizes.
func TestOneCallDecidesAsOneCallEach(t *testing.T) {
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	start := time.Date(2026, 11, 23, 23, 58, 0, 0, time.UTC).UnixMilli()
	// A run the random ones seldom make: a ban that outlasts its minute, a request in the next
	// minute while it runs (the minute starts over), then one call for two requests after the
	// ban's end, the second queued with a clock from before it.
	at := start + 30_000
	banned := []int64{at, at + 1, at + 2, at + 3}                // two admitted, a first 429, then banned
	during := at + 3 + 70_000 - 5_000                            // in the next minute, banned
	after := []int64{at + 3 + 70_000 + 10, at + 3 + 70_000 - 10} // the ban has ended; not yet
	compareCalls(t, rdb, "scripted", [4]int64{2, 100, 1, 70_000}, slices.Concat(banned, []int64{during}, after), []int{1, 1, 1, 1, 1, 2})

	rng := rand.New(rand.NewPCG(13, 23))
	for run := range 300 {
		// Small limits reach 429s and bans; larger ones keep calls on the short path of the
		// common case, across a minute's end, and into a ban's last moments.
		limits := [4]int64{rng.Int64N(6) + 1, rng.Int64N(15) + 1, rng.Int64N(4), rng.Int64N(90_000) + 1}
		if run%2 == 1 {
			limits = [4]int64{rng.Int64N(40) + 10, rng.Int64N(200) + 50, rng.Int64N(3), rng.Int64N(5_000) + 1}
		}
		now := start
		var times []int64
		for range 40 {
			switch r := rng.IntN(10); {
			case r < 6:
				now += rng.Int64N(200)
			case r < 8:
				now += rng.Int64N(40_000)
			case r < 9:
				now -= rng.Int64N(3_000) // a request queued after one with a later clock
			default:
				now += rng.Int64N(200_000)
			}
			times = append(times, now)
		}
		var chunks []int
		for left := len(times); left > 0; {
			n := min(1+rng.IntN(8), left)
			chunks = append(chunks, n)
			left -= n
		}
		compareCalls(t, rdb, strconv.Itoa(run), limits, times, chunks)
	}
}

// compareCalls decides the requests at times, from two callers of their own: for one, a call
// of rate.lua each; for the other, one call for each of chunks' numbers of them in turn. The
// test fails unless both get the same answers, hashes and expiries.
func compareCalls(t *testing.T, rdb *redis.Client, run string, limits [4]int64, times []int64, chunks []int) {
	t.Helper()
	ctx := context.Background()
	one, many := "{test:rl:one:"+run+"}", "{test:rl:many:"+run+"}"
	var want, got []int64
	for _, at := range times {
		want = append(want, decideAll(t, ctx, rdb, one, limits, at)...)
	}
	i := 0
	for _, n := range chunks {
		got = append(got, decideAll(t, ctx, rdb, many, limits, times[i:i+n]...)...)
		i += n
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("run %s, limits %v, times %v, calls of %v:\none call for several: %v\none call each:        %v", run, limits, times, chunks, got, want)
	}
	hOne, hMany := rdb.HGetAll(ctx, one).Val(), rdb.HGetAll(ctx, many).Val()
	if !reflect.DeepEqual(hOne, hMany) {
		t.Fatalf("run %s: the hash after one call for several is %v; after one call each, %v", run, hMany, hOne)
	}
	// Both expiries count from the same request's clock; Redis's own clock moved by the time
	// the calls took, a few ms.
	tOne, tMany := rdb.PTTL(ctx, one).Val(), rdb.PTTL(ctx, many).Val()
	if d := tOne - tMany; d < -time.Second || d > time.Second || tOne <= 0 {
		t.Fatalf("run %s: the hash expires in %v after one call for several, in %v after one call each", run, tMany, tOne)
	}
}

// decideAll runs rate.lua once for the requests at times of caller key, and returns its reply.
func decideAll(t *testing.T, ctx context.Context, rdb *redis.Client, key string, limits [4]int64, times ...int64) []int64 {
	t.Helper()
	args := []any{limits[0], limits[1], limits[2], limits[3], 0}
	for _, at := range times {
		args = append(args, strconv.FormatInt(at, 10))
	}
	res, err := rateScript.Run(ctx, rdb, []string{key}, args...).Int64Slice()
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 6*len(times) {
		t.Fatalf("%d values for %d requests", len(res), len(times))
	}
	return res
}
