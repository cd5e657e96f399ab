package redisstore

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/pagetoken"
)

// Keys is an order.KeyStore in Redis, with a cache of the keys found at one version of them.
type Keys struct {
	conn
	mu    sync.Mutex
	at    uint64 // the version of the keys cached
	cache map[order.Hash]order.Key
}

func NewKeys(rdb redis.UniversalClient, prefix string, timeout time.Duration) (*Keys, error) {
	c, err := newConn(rdb, prefix, timeout)
	return &Keys{conn: c}, err
}

// Lookup returns the key with hash h: within a Trip from the cache (before the round trip, until Confirm).
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
	p := s.rdb.Pipeline()
	ver, rec := p.MGet(ctx, s.k.keysVersion...), p.HGet(ctx, s.k.keysByHash, string(h))
	if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return order.Key{}, classify(ctx, err)
	}
	k, err := decodeKey(rec.Val())
	if rec.Err() != nil {
		err = order.ErrKeyNotFound
	}
	v, kept, verr := version(ver.Val())
	if err = cmp.Or(verr, err); kept && (err == nil || errors.Is(err, order.ErrKeyNotFound)) {
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

func (s *Keys) Add(ctx context.Context, k order.Key) error {
	if err := k.Validate(); err != nil {
		return err
	}
	record, _ := json.Marshal(k) // never fails
	cmd, err := s.run(ctx, addKeyScript, s.k.keys, k.Name, string(k.Hash), string(record), newGeneration())
	if added, _ := cmd.Int64(); err == nil && added == 0 {
		return fmt.Errorf("%w: %q", order.ErrNameTaken, k.Name)
	}
	return err
}

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

// Revoke removes the key named nameOrPrefix, else the first by name with that prefix (revokekey.lua).
func (s *Keys) Revoke(ctx context.Context, nameOrPrefix string) (order.Key, error) {
	byPrefix := map[bool]string{true: "1", false: "0"}[order.LooksLikePrefix(nameOrPrefix)]
	cmd, err := s.run(ctx, revokeKeyScript, s.k.keys, nameOrPrefix, byPrefix, newGeneration())
	if errors.Is(err, redis.Nil) {
		return order.Key{}, fmt.Errorf("%w: %q", order.ErrKeyNotFound, nameOrPrefix)
	} else if err != nil {
		return order.Key{}, err
	}
	return decodeKey(cmd.Val().(string)) // the record: nil was redis.Nil
}

func decodeKey(raw string) (order.Key, error) {
	var k order.Key
	if err := cmp.Or(json.Unmarshal([]byte(raw), &k), k.ValidateStored()); err != nil { // Stored: names from before CheckName's rules
		return order.Key{}, fmt.Errorf("%w: bad key record in redis: %w", order.ErrCorrupt, err)
	}
	return k, nil
}

// Secrets is a pagetoken.SecretStore in Redis, shared by every instance.
type Secrets struct{ conn }

func NewSecrets(rdb redis.UniversalClient, prefix string, timeout time.Duration) (*Secrets, error) {
	c, err := newConn(rdb, prefix, timeout)
	return &Secrets{conn: c}, err
}

// PageTokenSecret reads the secret (for a read-only Redis), else makes it with SET NX GET.
func (s *Secrets) PageTokenSecret(ctx context.Context) ([]byte, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	kept, err := s.rdb.Get(ctx, s.k.pageTokenSecret).Result()
	if errors.Is(err, redis.Nil) {
		fresh := make([]byte, pagetoken.MinSecretLen)
		rand.Read(fresh) // never fails (crypto/rand)
		if kept, err = s.rdb.SetArgs(ctx, s.k.pageTokenSecret, fresh, redis.SetArgs{Mode: "NX", Get: true}).Result(); errors.Is(err, redis.Nil) {
			return fresh, nil // ours was kept
		}
	}
	if err != nil {
		return nil, fmt.Errorf("page-token secret %s: %w", s.k.pageTokenSecret, classify(ctx, err))
	}
	if len(kept) < pagetoken.MinSecretLen {
		return nil, fmt.Errorf("%w: page-token secret %s: %d bytes, want at least %d",
			order.ErrCorrupt, s.k.pageTokenSecret, len(kept), pagetoken.MinSecretLen)
	}
	return []byte(kept), nil
}
