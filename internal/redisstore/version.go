package redisstore

import (
	"crypto/rand"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"sync"
	"sync/atomic"
)

// version is where the orders, or the keys, stand in Redis (docs/redis-layout.md).
type version struct {
	generation string
	counter    uint64
}

// id is the version as order.Store reports it.
func (v version) id() uint64 {
	h := fnv.New64a()
	h.Write([]byte(v.generation + strconv.FormatUint(v.counter, 10)))
	return h.Sum64()
}

var errNoGeneration = errors.New("no generation")

// parseVersion reads the reply of MGET counter generation.
func parseVersion(vals []any) (version, error) {
	if len(vals) != 2 {
		return version{}, fmt.Errorf("version: %d values", len(vals))
	}
	var v version
	if s, ok := vals[0].(string); ok {
		var err error
		if v.counter, err = strconv.ParseUint(s, 10, 64); err != nil {
			return version{}, fmt.Errorf("%w: version counter %q", errBadRecord, s)
		}
	}
	g, ok := vals[1].(string)
	if !ok {
		return v, errNoGeneration
	}
	v.generation = g
	return v, nil
}

// newGeneration is the generation a write's script sets with its change.
func newGeneration() string { return rand.Text() }

// atVersion is what was read at one version of a data set.
type atVersion[K comparable, V any] struct {
	version version
	mu      sync.RWMutex
	byKey   map[K]V
}

func (c *atVersion[K, V]) at(v version, k K) (V, bool) {
	if c == nil || c.version != v {
		return *new(V), false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	val, ok := c.byKey[k]
	return val, ok
}

// keepAt keeps val (unless nil) for k at version v, up to max; another version starts anew.
func keepAt[K comparable, V any](p *atomic.Pointer[atVersion[K, V]], v version, k K, val *V, max int) {
	cur := p.Load()
	if cur == nil || cur.version != v {
		next := &atVersion[K, V]{version: v, byKey: map[K]V{}}
		if val != nil {
			next.byKey[k] = *val
		}
		p.CompareAndSwap(cur, next)
		return
	}
	if val == nil {
		return
	}
	cur.mu.Lock()
	defer cur.mu.Unlock()
	if _, ok := cur.byKey[k]; ok || len(cur.byKey) < max {
		cur.byKey[k] = *val
	}
}
