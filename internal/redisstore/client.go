package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

type conn struct {
	rdb     redis.UniversalClient
	batch   *batcher // for cancel.lua, the hot path's script
	k       names
	timeout time.Duration
}

func newConn(rdb redis.UniversalClient, prefix string, timeout time.Duration) (conn, error) {
	k, err := newNames(prefix)
	if err != nil {
		return conn{}, err
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return conn{rdb: rdb, batch: newBatcher(rdb, timeout), k: k, timeout: timeout}, nil
}

// callContext bounds one Redis call in time, with errCallTimeout as the cause.
func callContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, timeout, errCallTimeout)
}

// txPipelined runs fn in MULTI/EXEC; on EXECABORT the refused command's error comes first.
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

// sentOnce is a command a Cluster client must not resend (docs/redis-layout.md).
type sentOnce struct{ redis.Cmder }

func (sentOnce) NoRetry() bool { return true }

// once is c's client for the scripts that write alone.
func (c conn) once() redis.Scripter { return onceScripter{p: c.rdb} }

// onceScripter runs scripts on p with each EVAL and EVALSHA sent once, in a pipeline of its own.
type onceScripter struct {
	redis.Scripter // nil: a Script's Run and Eval use only the two methods below
	p              pipeliner
}

func (o onceScripter) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return o.send(ctx, scriptCmd(ctx, "eval", script, keys, args))
}

func (o onceScripter) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return o.send(ctx, scriptCmd(ctx, "evalsha", sha1, keys, args))
}

func (o onceScripter) send(ctx context.Context, cmd *redis.Cmd) *redis.Cmd {
	_, err := o.p.Pipelined(ctx, func(p redis.Pipeliner) error { return p.Process(ctx, sentOnce{cmd}) })
	stampPipelineError([]redis.Cmder{cmd}, err)
	return cmd
}
