package redisstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// version is where the orders, or the keys, stand in Redis: their version counter, which
// every writer increments with each change, and their generation, a random token beside it
// (in the same hash tag) that every writer, and a reader that finds none, creates with
// SET NX. A Redis that lost its data (a restart without persistence, FLUSHALL) and was
// filled again may count back to a number an instance has seen, but not with the same
// generation: so what an instance keeps for one version is never taken for another.
type version struct {
	generation string
	counter    uint64
}

// id is the version as order.Store reports it: equal for equal versions, and, but for a
// 2^-64 chance, different otherwise. Only equality is ever asked of it.
func (v version) id() uint64 {
	h := fnv.New64a()
	h.Write([]byte(v.generation))
	var b [20]byte
	h.Write(strconv.AppendUint(b[:0], v.counter, 10))
	return h.Sum64()
}

// readVersion reads the counter and the generation of one data set in one command (the two
// keys share a hash tag, so MGET runs on a Cluster too).
func readVersion(ctx context.Context, rdb rediser, counterKey, generationKey string) (version, error) {
	vals, err := rdb.MGet(ctx, counterKey, generationKey).Result()
	if err != nil {
		return version{}, err
	}
	return completeVersion(ctx, rdb, vals, generationKey)
}

// errNoGeneration says that a data set has no generation yet.
var errNoGeneration = errors.New("no generation")

// parseVersion reads the reply of MGET counter generation.
func parseVersion(vals []any) (version, error) {
	if len(vals) != 2 {
		return version{}, fmt.Errorf("version: %d values", len(vals))
	}
	var v version
	if s, ok := vals[0].(string); ok {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return version{}, fmt.Errorf("%w: version counter %q", errBadRecord, s)
		}
		v.counter = n
	}
	g, ok := vals[1].(string)
	if !ok {
		return v, errNoGeneration
	}
	v.generation = g
	return v, nil
}

// completeVersion parses an MGET of a version and creates the generation when there is
// none yet (one more round trip, once per data set).
func completeVersion(ctx context.Context, rdb rediser, vals []any, generationKey string) (version, error) {
	v, err := parseVersion(vals)
	if !errors.Is(err, errNoGeneration) {
		return v, err
	}
	v.generation, err = createGeneration(ctx, rdb, generationKey)
	return v, err
}

// createGeneration sets a new generation unless there is one, and returns the one that
// stands (SET NX GET: the winner of a race is everyone's answer).
func createGeneration(ctx context.Context, rdb rediser, key string) (string, error) {
	token := newGeneration()
	old, err := rdb.SetArgs(ctx, key, token, redis.SetArgs{Mode: "NX", Get: true}).Result()
	if errors.Is(err, redis.Nil) {
		return token, nil
	}
	return old, err
}

// newGeneration is a random token (crypto/rand.Text: 128 bits or more). Each write passes
// one to its script, which keeps it only when the data set has no generation yet.
func newGeneration() string { return rand.Text() }
