package redisstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/auth"
)

var _ auth.KeyStore = (*Keys)(nil)

// Keys is an auth.KeyStore in Redis. While Watch runs, lookups are answered from a copy of
// the keys that follows their version; a key not in the copy is read from Redis, so a new
// key works at once everywhere, and a revoked one stops within the poll interval.
type Keys struct {
	conn
	cache atomic.Pointer[keyCache]
	polls freshness
}

// keyCache is every key of one version.
type keyCache struct {
	version uint64
	byHash  map[auth.Hash]auth.Key
}

// NewKeys returns the store of the deployment whose keys start with prefix.
func NewKeys(rdb rediser, prefix string, timeout time.Duration) (*Keys, error) {
	c, err := newConn(rdb, prefix, timeout)
	return &Keys{conn: c}, err
}

// Watch keeps the copy of the keys current, polling their version every interval, until ctx
// ends.
func (s *Keys) Watch(ctx context.Context, every time.Duration) {
	s.polls.poll(ctx, every, s.refresh)
}

func (s *Keys) refresh(ctx context.Context) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	v, err := s.rdb.Get(ctx, s.k.keysVersion).Uint64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	if cur := s.cache.Load(); cur != nil && cur.version == v {
		return nil
	}
	// Read after the version: a change in between leaves a newer copy under an older version,
	// which the next poll replaces.
	all, err := s.rdb.HGetAll(ctx, s.k.keysByHash).Result()
	if err != nil {
		return err
	}
	byHash := make(map[auth.Hash]auth.Key, len(all))
	for _, raw := range all {
		if k, err := decodeKey(raw); err == nil {
			byHash[k.Hash] = k
		}
	}
	s.cache.Store(&keyCache{version: v, byHash: byHash})
	return nil
}

// Lookup returns the key with hash h: from the copy while it is fresh, else from Redis.
func (s *Keys) Lookup(ctx context.Context, h auth.Hash) (auth.Key, error) {
	if cur := s.cache.Load(); cur != nil && s.polls.fresh() {
		if k, ok := cur.byHash[h]; ok {
			return k, nil
		}
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	raw, err := s.rdb.HGet(ctx, s.k.keysByHash, string(h)).Result()
	if errors.Is(err, redis.Nil) {
		return auth.Key{}, auth.ErrKeyNotFound
	}
	if err != nil {
		return auth.Key{}, classify(ctx, err)
	}
	return decodeKey(raw)
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
	ctx, cancel := s.call(ctx)
	defer cancel()
	added, err := addKeyScript.Run(ctx, s.rdb, []string{s.k.keysByName, s.k.keysByHash, s.k.keysVersion},
		k.Name, string(k.Hash), string(record)).Int64()
	if err != nil {
		return classify(ctx, err)
	}
	if added == 0 {
		return fmt.Errorf("%w: %q", auth.ErrNameTaken, k.Name)
	}
	return nil
}

// forget drops the copy after a change through this store, so that this instance sees the
// change at once; lookups read Redis until the next poll.
func (s *Keys) forget() { s.cache.Store(nil) }

// List returns every key, sorted by name.
func (s *Keys) List(ctx context.Context) ([]auth.Key, error) {
	ctx, cancel := s.call(ctx)
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

// Revoke removes the key that auth.Find finds for nameOrPrefix among every key, by its name,
// in one atomic step.
func (s *Keys) Revoke(ctx context.Context, nameOrPrefix string) (auth.Key, error) {
	keys, err := s.List(ctx)
	if err != nil {
		return auth.Key{}, err
	}
	k, err := auth.Find(keys, nameOrPrefix)
	if err != nil {
		return auth.Key{}, err
	}
	return s.revoke(ctx, k.Name)
}

func (s *Keys) revoke(ctx context.Context, name string) (auth.Key, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	raw, err := revokeKeyScript.Run(ctx, s.rdb, []string{s.k.keysByName, s.k.keysByHash, s.k.keysVersion}, name).Text()
	s.forget()
	if errors.Is(err, redis.Nil) {
		return auth.Key{}, fmt.Errorf("%w: %q", auth.ErrKeyNotFound, name)
	}
	if err != nil {
		return auth.Key{}, classify(ctx, err)
	}
	return decodeKey(raw)
}

func decodeKey(raw string) (auth.Key, error) {
	var k auth.Key
	if err := json.Unmarshal([]byte(raw), &k); err != nil {
		return auth.Key{}, fmt.Errorf("bad key record in redis: %w", err)
	}
	if err := k.Validate(); err != nil {
		return auth.Key{}, fmt.Errorf("bad key record in redis: %w", err)
	}
	return k, nil
}
