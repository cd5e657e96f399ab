package redisstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/redis/go-redis/v9"
)

var _ order.KeyStore = (*Keys)(nil)

// Keys is an order.KeyStore in Redis, with a cache of the keys found at one version of them.
type Keys struct {
	conn
	mu    sync.Mutex
	at    string // the version of the keys cached
	cache map[order.Hash]order.Key
}

// NewKeys returns the store of the deployment whose keys start with prefix.
func NewKeys(rdb redis.UniversalClient, prefix string, timeout time.Duration) (*Keys, error) {
	c, err := newConn(rdb, prefix, timeout)
	return &Keys{conn: c}, err
}

// Lookup returns the key with hash h: within a Trip from the cache, at the version the round
// trip read, or before it provisionally (confirmed by order.Confirm); else from Redis.
func (s *Keys) Lookup(ctx context.Context, h order.Hash) (order.Key, error) {
	if t := tripOf(ctx, s.k.prefix); t != nil {
		s.mu.Lock()
		k, ok := s.cache[h]
		at := s.at
		s.mu.Unlock()
		if ok && !t.read {
			t.answered, t.hash, t.answeredAt = s, h, at
		}
		if ok && (!t.read || t.keys == at) {
			return k, nil
		}
	}
	return s.read(ctx, h)
}

// read reads the keys' version, then the key, in one pipeline (not MULTI, which Redis refuses
// when out of memory), and caches it at that version: a revocation since would move it.
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
	v, err := parseVersion(ver.Val())
	k := order.Key{}
	if err == nil && rec.Err() != nil {
		err = order.ErrKeyNotFound
	} else if err == nil {
		k, err = decodeKey(rec.Val())
	}
	if v != "" && (err == nil || errors.Is(err, order.ErrKeyNotFound)) {
		s.mu.Lock()
		if s.at != v {
			s.at, s.cache = v, map[order.Hash]order.Key{}
		}
		if err == nil {
			s.cache[h] = k
		}
		s.mu.Unlock()
	}
	return k, err
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
	cmd, err := s.run(ctx, addKeyScript, s.k.keys, k.Name, string(k.Hash), string(record), newGeneration())
	if added, _ := cmd.Int64(); err == nil && added == 0 {
		return fmt.Errorf("%w: %q", order.ErrNameTaken, k.Name)
	}
	return err
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
// By prefix it reads every record, passing over those that do not decode: a bad record
// another writer left never stops a revoke of a good key.
func (s *Keys) Revoke(ctx context.Context, nameOrPrefix string) (order.Key, error) {
	cctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	h, err := s.rdb.HGet(cctx, s.k.keysByName, nameOrPrefix).Result()
	found := order.Key{Name: nameOrPrefix, Hash: order.Hash(h)}
	if errors.Is(err, redis.Nil) && order.LooksLikePrefix(nameOrPrefix) {
		var all map[string]string
		all, err = s.rdb.HGetAll(cctx, s.k.keysByHash).Result()
		found = order.Key{}
		for _, raw := range all {
			if k, derr := decodeKey(raw); derr == nil && k.Prefix == nameOrPrefix && (found.Name == "" || k.Name < found.Name) {
				found = k
			}
		}
	}
	switch {
	case err == nil && found.Name != "":
		return s.revoke(ctx, found)
	case err == nil || errors.Is(err, redis.Nil):
		return order.Key{}, fmt.Errorf("%w: %q", order.ErrKeyNotFound, nameOrPrefix)
	}
	return order.Key{}, classify(cctx, err)
}

func (s *Keys) revoke(ctx context.Context, k order.Key) (order.Key, error) {
	cmd, err := s.run(ctx, revokeKeyScript, s.k.keys, k.Name, string(k.Hash), newGeneration())
	if errors.Is(err, redis.Nil) {
		return order.Key{}, fmt.Errorf("%w: %q", order.ErrKeyNotFound, k.Name)
	} else if err != nil {
		return order.Key{}, err
	}
	raw, _ := cmd.Val().(string)
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
