package redisstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
)

// version is where the orders, or the keys, stand in Redis: their version counter, which
// every writer increments with each change, and their generation, a random token beside it
// (in the same hash tag) that every writer sets anew with each change. A Redis that lost its
// data (a restart without persistence, FLUSHALL, a failover to a replica that lagged) may
// count back to a number an instance has seen, but never with a generation it has seen: so
// what an instance keeps for one version is never taken for another.
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
	return completeVersion(vals)
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

// completeVersion parses an MGET of a version. A data set without a generation (Redis lost
// it, and nothing has written since) gets one of its own for this read only, which no other
// read shares: whatever was kept for an earlier version is not used, and what is kept for
// this one is never used either. A reader never writes, so reads go on working on a Redis
// that refuses writes (out of memory, a read-only replica, a user without write rights).
func completeVersion(vals []any) (version, error) {
	v, err := parseVersion(vals)
	if errors.Is(err, errNoGeneration) {
		v.generation, err = "unset:"+newGeneration(), nil
	}
	return v, err
}

// newGeneration is a random token (crypto/rand.Text: 128 bits or more). Each write passes
// one to its script, which sets it as the data set's generation with the change.
func newGeneration() string { return rand.Text() }
