package redisstore

import (
	"context"
	"crypto/rand"
	"fmt"
	"hash/fnv"
	randv2 "math/rand/v2"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
)

// trip is what a request's round trip (order.Trip) read for one deployment, and a key answered
// from the cache before it, to confirm.
type trip struct {
	prefix       string
	read         bool   // orders and keys hold what the round trip read
	orders, keys string // versions (parseVersion)
	answered     *Keys  // the store that answered hash from its cache at answeredAt
	hash         order.Hash
	answeredAt   string
}

// tripOf returns ctx's Trip's reads for prefix's deployment, or nil outside a Trip.
func tripOf(ctx context.Context, prefix string) *trip {
	t := order.TripOf(ctx)
	if t == nil {
		return nil
	} else if t.Carried == nil {
		t.Carried = &trip{prefix: prefix}
	}
	if c, _ := t.Carried.(*trip); c != nil && c.prefix == prefix {
		return c
	}
	return nil
}

// Confirm reads a key answered from the cache again unless the round trip read its version.
func (t *trip) Confirm(ctx context.Context) error {
	s := t.answered
	if t.answered = nil; s == nil || t.read && t.keys == t.answeredAt {
		return nil
	}
	_, err := s.read(ctx, t.hash)
	return err
}

// keep takes the versions the round trip read, if both parse.
func (t *trip) keep(orders, keys *redis.SliceCmd) {
	o, oerr := parseVersion(orders.Val())
	k, kerr := parseVersion(keys.Val())
	if oerr == nil && kerr == nil {
		t.read, t.orders, t.keys = true, o, k
	}
}

// parseVersion reads MGET counter generation: "" without a generation (Redis lost it, nothing
// wrote since), a version nothing is kept at (docs/redis-layout.md).
func parseVersion(vals []any) (string, error) {
	if len(vals) != 2 {
		return "", fmt.Errorf("version: %d values", len(vals))
	}
	counter, _ := vals[0].(string)
	if _, err := strconv.ParseUint(counter, 10, 64); err != nil && vals[0] != nil {
		return "", fmt.Errorf("%w: version counter %q", errBadRecord, counter)
	}
	if generation, ok := vals[1].(string); ok {
		return counter + " " + generation, nil
	}
	return "", nil
}

// versionID is a version as order.Store reports it; "" is a new one at every read.
func versionID(v string) uint64 {
	if v == "" {
		return randv2.Uint64()
	}
	h := fnv.New64a()
	h.Write([]byte(v))
	return h.Sum64()
}

// newGeneration is the generation a write's script sets with its change.
func newGeneration() string { return rand.Text() }
