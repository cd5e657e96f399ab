package redisstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/pagetoken"
)

var _ pagetoken.SecretStore = (*Secrets)(nil)

// Secrets is a pagetoken.SecretStore in Redis, shared by every instance.
type Secrets struct{ conn }

// NewSecrets returns the secret store of the deployment whose keys start with prefix.
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
		kept, err = s.rdb.SetArgs(ctx, s.k.pageTokenSecret, fresh, redis.SetArgs{Mode: "NX", Get: true}).Result()
		if errors.Is(err, redis.Nil) {
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
