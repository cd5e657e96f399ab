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

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/store"
)

var _ auth.KeyStore = (*Keys)(nil)

// Keys is an auth.KeyStore in Redis, with a cache of one version (docs/redis-layout.md).
type Keys struct {
	conn
	cache atomic.Pointer[atVersion[auth.Hash, auth.Key]]
}

// NewKeys returns the store of the deployment whose keys start with prefix.
func NewKeys(rdb redis.UniversalClient, prefix string, timeout time.Duration) (*Keys, error) {
	c, err := newConn(rdb, prefix, timeout)
	return &Keys{conn: c}, err
}

// Lookup returns the key with hash h, from the cache within a Trip (see Keys), else from Redis.
func (s *Keys) Lookup(ctx context.Context, h auth.Hash) (auth.Key, error) {
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
func (s *Keys) read(ctx context.Context, h auth.Hash) (auth.Key, error) {
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
		return auth.Key{}, classify(ctx, err)
	}
	// Keys without a generation (Redis lost it) are answered and not kept.
	v, verr := parseVersion(ver.Val())
	if verr != nil && !errors.Is(verr, errNoGeneration) {
		return auth.Key{}, classify(ctx, verr)
	}
	keep := func(k *auth.Key) {
		if verr == nil {
			keepAt(&s.cache, v, h, k, math.MaxInt)
		}
	}
	raw, err := rec.Result()
	if errors.Is(err, redis.Nil) {
		keep(nil)
		return auth.Key{}, auth.ErrKeyNotFound
	}
	if err != nil {
		return auth.Key{}, classify(ctx, err)
	}
	k, err := decodeKey(raw)
	if err != nil {
		return auth.Key{}, err
	}
	keep(&k)
	return k, nil
}

// Add stores k if its name is unused.
func (s *Keys) Add(ctx context.Context, k auth.Key) error {
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
		return fmt.Errorf("%w: %q", auth.ErrNameTaken, k.Name)
	}
	return nil
}

// List returns every key, sorted by name.
func (s *Keys) List(ctx context.Context) ([]auth.Key, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	all, err := s.rdb.HGetAll(ctx, s.k.keysByHash).Result()
	if err != nil {
		return nil, classify(ctx, err)
	}
	keys := make([]auth.Key, 0, len(all))
	for _, raw := range all {
		k, err := decodeKey(raw)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b auth.Key) int { return cmp.Compare(a.Name, b.Name) })
	return keys, nil
}

// Revoke removes the key named nameOrPrefix, else the first by name with that shown prefix
// (names, which an operator chose, first), if its name still names it when the script runs.
// It reads only what it needs: by name, that name's record alone; by prefix, every record,
// passing over those that do not decode (they match no prefix). So a bad record another
// writer left never stops a revoke of a good key, a leaked one above all.
func (s *Keys) Revoke(ctx context.Context, nameOrPrefix string) (auth.Key, error) {
	h, err := s.hashNamed(ctx, nameOrPrefix)
	if err == nil {
		return s.revoke(ctx, auth.Key{Name: nameOrPrefix, Hash: h})
	}
	if !errors.Is(err, auth.ErrKeyNotFound) || !auth.LooksLikePrefix(nameOrPrefix) {
		return auth.Key{}, err
	}
	k, err := s.firstWithPrefix(ctx, nameOrPrefix)
	if err != nil {
		return auth.Key{}, err
	}
	return s.revoke(ctx, k)
}

// hashNamed returns the hash the by-name index gives name, or ErrKeyNotFound.
func (s *Keys) hashNamed(ctx context.Context, name string) (auth.Hash, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	h, err := s.rdb.HGet(ctx, s.k.keysByName, name).Result()
	if errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("%w: %q", auth.ErrKeyNotFound, name)
	}
	if err != nil {
		return "", classify(ctx, err)
	}
	return auth.Hash(h), nil
}

// firstWithPrefix returns the key, first by name, whose shown prefix is prefix.
func (s *Keys) firstWithPrefix(ctx context.Context, prefix string) (auth.Key, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	all, err := s.rdb.HGetAll(ctx, s.k.keysByHash).Result()
	if err != nil {
		return auth.Key{}, classify(ctx, err)
	}
	var found *auth.Key
	for _, raw := range all {
		k, err := decodeKey(raw)
		if err == nil && k.Prefix == prefix && (found == nil || k.Name < found.Name) {
			found = &k
		}
	}
	if found == nil {
		return auth.Key{}, fmt.Errorf("%w: %q", auth.ErrKeyNotFound, prefix)
	}
	return *found, nil
}

func (s *Keys) revoke(ctx context.Context, k auth.Key) (auth.Key, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	raw, err := revokeKeyScript.Run(ctx, s.once(), []string{s.k.keysByName, s.k.keysByHash, s.k.keysVersion, s.k.keysGeneration},
		k.Name, string(k.Hash), newGeneration()).Text()
	if errors.Is(err, redis.Nil) {
		return auth.Key{}, fmt.Errorf("%w: %q", auth.ErrKeyNotFound, k.Name)
	}
	if err != nil {
		return auth.Key{}, classify(ctx, err)
	}
	return decodeKey(raw)
}

func decodeKey(raw string) (auth.Key, error) {
	var k auth.Key
	err := json.Unmarshal([]byte(raw), &k)
	if err == nil {
		err = k.ValidateStored() // a name from before CheckName's rules still reads
	}
	if err != nil {
		return auth.Key{}, fmt.Errorf("%w: bad key record in redis: %w", store.ErrCorrupt, err)
	}
	return k, nil
}
