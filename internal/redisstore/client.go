package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// rediser is the part of a go-redis client the stores use: one node, Sentinel or Cluster.
type rediser interface {
	redis.Scripter
	Get(ctx context.Context, key string) *redis.StringCmd
	HGet(ctx context.Context, key, field string) *redis.StringCmd
	HGetAll(ctx context.Context, key string) *redis.MapStringStringCmd
	HScan(ctx context.Context, key string, cursor uint64, match string, count int64) *redis.ScanCmd
	MGet(ctx context.Context, keys ...string) *redis.SliceCmd
	SetArgs(ctx context.Context, key string, value any, a redis.SetArgs) *redis.StatusCmd
	TxPipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
}

// conn is what every store of this package holds.
type conn struct {
	rdb     rediser
	batch   *batcher // for the hot path's scripts (batch.go), bounded by timeout
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
	return conn{rdb: rdb, batch: newBatcher(rdb, timeout), k: k, timeout: timeout}, nil
}

// once is c's client for the scripts that write alone: each command sent once (once.go).
func (c conn) once() redis.Scripter { return onceScripter{p: c.rdb} }

// call bounds one Redis call in time: a Redis that does not answer costs at most timeout.
// The bound carries its own cause, so that classify tells it from the request's own
// cancellation or deadline.
func (c conn) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return callContext(ctx, c.timeout)
}

func callContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, timeout, errCallTimeout)
}

// txPipelined runs fn's commands in one MULTI/EXEC. When Redis discards the transaction
// (EXECABORT), the reason is the error of a command it refused to queue: that error is
// returned first, so that classify judges the reason, not the abort.
func (c conn) txPipelined(ctx context.Context, fn func(redis.Pipeliner) error) error {
	cmds, err := c.rdb.TxPipelined(ctx, fn)
	if !redis.IsExecAbortError(err) {
		return err
	}
	for _, cmd := range cmds {
		if cerr := cmd.Err(); cerr != nil && !redis.IsExecAbortError(cerr) {
			return fmt.Errorf("%w (%v)", cerr, err)
		}
	}
	return err
}
