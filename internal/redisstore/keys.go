package redisstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/redis/go-redis/v9"
)

var _ order.KeyStore = (*Keys)(nil)

// Keys is an order.KeyStore in Redis, with a cache of one version (docs/redis-layout.md).
type Keys struct {
	conn
	cache atomic.Pointer[atVersion[order.Hash, order.Key]]
}

// NewKeys returns the store of the deployment whose keys start with prefix.
func NewKeys(rdb redis.UniversalClient, prefix string, timeout time.Duration) (*Keys, error) {
	c, err := newConn(rdb, prefix, timeout)
	return &Keys{conn: c}, err
}

// Lookup returns the key with hash h, from the cache within a Trip (see Keys), else from Redis.
func (s *Keys) Lookup(ctx context.Context, h order.Hash) (order.Key, error) {
	if c, cur := carriedOf(ctx, s.k.prefix), s.cache.Load(); c != nil && cur != nil {
		v := c.keys
		if !c.read {
			v = cur.version
		}
		if k, ok := cur.at(v, h); ok {
			if !c.read {
				c.answered, c.keyStore, c.hash, c.answeredAt = true, s, h, v
			}
			return k, nil
		}
	}
	return s.read(ctx, h)
}

// read reads the version and the key in one pipeline (not MULTI: refused when out of memory).
func (s *Keys) read(ctx context.Context, h order.Hash) (order.Key, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	var ver *redis.SliceCmd
	var rec *redis.StringCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		ver = p.MGet(ctx, s.k.keysVersion, s.k.keysGeneration)
		rec = p.HGet(ctx, s.k.keysByHash, string(h))
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return order.Key{}, classify(ctx, err)
	}
	// Keys without a generation (Redis lost it) are answered and not kept.
	v, verr := parseVersion(ver.Val())
	if verr != nil && !errors.Is(verr, errNoGeneration) {
		return order.Key{}, classify(ctx, verr)
	}
	keep := func(k *order.Key) {
		if verr == nil {
			keepAt(&s.cache, v, h, k, math.MaxInt)
		}
	}
	raw, err := rec.Result()
	if errors.Is(err, redis.Nil) {
		keep(nil)
		return order.Key{}, order.ErrKeyNotFound
	}
	if err != nil {
		return order.Key{}, classify(ctx, err)
	}
	k, err := decodeKey(raw)
	if err != nil {
		return order.Key{}, err
	}
	keep(&k)
	return k, nil
}

// Add stores k if its name is unused.
func (s *Keys) Add(ctx context.Context, k order.Key) error {
	if err := k.Validate(); err != nil {
		return err
	}
	record, err := json.Marshal(k)
	if err != nil {
		return err
	}
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	added, err := addKeyScript.Run(ctx, s.once(), []string{s.k.keysByName, s.k.keysByHash, s.k.keysVersion, s.k.keysGeneration},
		k.Name, string(k.Hash), string(record), newGeneration()).Int64()
	if err != nil {
		return classify(ctx, err)
	}
	if added == 0 {
		return fmt.Errorf("%w: %q", order.ErrNameTaken, k.Name)
	}
	return nil
}

// List returns every key, sorted by name.
func (s *Keys) List(ctx context.Context) ([]order.Key, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	all, err := s.rdb.HGetAll(ctx, s.k.keysByHash).Result()
	if err != nil {
		return nil, classify(ctx, err)
	}
	keys := make([]order.Key, 0, len(all))
	for _, raw := range all {
		k, err := decodeKey(raw)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b order.Key) int { return cmp.Compare(a.Name, b.Name) })
	return keys, nil
}

// Revoke removes the key named nameOrPrefix, else the first by name with that shown prefix
// (names, which an operator chose, first), if its name still names it when the script runs.
// It reads only what it needs: by name, that name's record alone; by prefix, every record,
// passing over those that do not decode (they match no prefix). So a bad record another
// writer left never stops a revoke of a good key, a leaked one above all.
func (s *Keys) Revoke(ctx context.Context, nameOrPrefix string) (order.Key, error) {
	h, err := s.hashNamed(ctx, nameOrPrefix)
	if err == nil {
		return s.revoke(ctx, order.Key{Name: nameOrPrefix, Hash: h})
	}
	if !errors.Is(err, order.ErrKeyNotFound) || !order.LooksLikePrefix(nameOrPrefix) {
		return order.Key{}, err
	}
	k, err := s.firstWithPrefix(ctx, nameOrPrefix)
	if err != nil {
		return order.Key{}, err
	}
	return s.revoke(ctx, k)
}

// hashNamed returns the hash the by-name index gives name, or ErrKeyNotFound.
func (s *Keys) hashNamed(ctx context.Context, name string) (order.Hash, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	h, err := s.rdb.HGet(ctx, s.k.keysByName, name).Result()
	if errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("%w: %q", order.ErrKeyNotFound, name)
	}
	if err != nil {
		return "", classify(ctx, err)
	}
	return order.Hash(h), nil
}

// firstWithPrefix returns the key, first by name, whose shown prefix is prefix.
func (s *Keys) firstWithPrefix(ctx context.Context, prefix string) (order.Key, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	all, err := s.rdb.HGetAll(ctx, s.k.keysByHash).Result()
	if err != nil {
		return order.Key{}, classify(ctx, err)
	}
	var found *order.Key
	for _, raw := range all {
		k, err := decodeKey(raw)
		if err == nil && k.Prefix == prefix && (found == nil || k.Name < found.Name) {
			found = &k
		}
	}
	if found == nil {
		return order.Key{}, fmt.Errorf("%w: %q", order.ErrKeyNotFound, prefix)
	}
	return *found, nil
}

func (s *Keys) revoke(ctx context.Context, k order.Key) (order.Key, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	raw, err := revokeKeyScript.Run(ctx, s.once(), []string{s.k.keysByName, s.k.keysByHash, s.k.keysVersion, s.k.keysGeneration},
		k.Name, string(k.Hash), newGeneration()).Text()
	if errors.Is(err, redis.Nil) {
		return order.Key{}, fmt.Errorf("%w: %q", order.ErrKeyNotFound, k.Name)
	}
	if err != nil {
		return order.Key{}, classify(ctx, err)
	}
	return decodeKey(raw)
}

func decodeKey(raw string) (order.Key, error) {
	var k order.Key
	err := json.Unmarshal([]byte(raw), &k)
	if err == nil {
		err = k.ValidateStored() // a name from before CheckName's rules still reads
	}
	if err != nil {
		return order.Key{}, fmt.Errorf("%w: bad key record in redis: %w", order.ErrCorrupt, err)
	}
	return k, nil
}
