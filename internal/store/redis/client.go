package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
)

// rediser is the part of a go-redis client the stores use: one node, Sentinel or Cluster.
type rediser interface {
	goredis.Scripter
	Get(ctx context.Context, key string) *goredis.StringCmd
	HGet(ctx context.Context, key, field string) *goredis.StringCmd
	HGetAll(ctx context.Context, key string) *goredis.MapStringStringCmd
	TxPipelined(ctx context.Context, fn func(goredis.Pipeliner) error) ([]goredis.Cmder, error)
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
		timeout = time.Second
	}
	return conn{rdb: rdb, k: k, timeout: timeout}, nil
}

// call bounds one Redis call in time: a Redis that does not answer costs at most timeout.
func (c conn) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.timeout)
}

// unavailable marks a failure to talk to Redis, which the HTTP layer answers with 503.
func unavailable(err error) error {
	if err == nil || errors.Is(err, order.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: redis: %w", order.ErrUnavailable, err)
}
