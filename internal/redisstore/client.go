package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/store"
)

// rediser is the part of a go-redis client the stores use: one node, Sentinel or Cluster.
type rediser interface {
	redis.Scripter
	Get(ctx context.Context, key string) *redis.StringCmd
	HGet(ctx context.Context, key, field string) *redis.StringCmd
	HGetAll(ctx context.Context, key string) *redis.MapStringStringCmd
	TxPipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
}

// conn is what every store of this package holds.
type conn struct {
	rdb     rediser
	k       names
	timeout time.Duration
}

func newConn(rdb rediser, prefix string, timeout time.Duration) (conn, error) {
	k, err := newNames(prefix)
	if err != nil {
		return conn{}, err
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return conn{rdb: rdb, k: k, timeout: timeout}, nil
}

// call bounds one Redis call in time: a Redis that does not answer costs at most timeout.
func (c conn) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.timeout)
}

// unavailable marks a failure to talk to Redis, which the HTTP layer answers with 503.
func unavailable(err error) error {
	if err == nil || errors.Is(err, store.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: redis: %w", store.ErrUnavailable, err)
}
