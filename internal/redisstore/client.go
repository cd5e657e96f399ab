package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// conn is what every store of one deployment holds: the client, its keys and its bound.
type conn struct {
	rdb     redis.UniversalClient
	k       names
	timeout time.Duration
}

func newConn(rdb redis.UniversalClient, prefix string, timeout time.Duration) (conn, error) {
	k, err := newNames(prefix)
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return conn{rdb: rdb, k: k, timeout: timeout}, err
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

// sentOnce is a command the client must not send again: one that may have run (its reply
// lost), or that a Cluster client would resend on its redirect loop (docs/redis-layout.md).
type sentOnce struct{ redis.Cmder }

func (sentOnce) NoRetry() bool { return true }

// once is c's client for the scripts that write alone: each EVALSHA and EVAL sent once.
func (c conn) once() redis.Scripter { return onceScripter{rdb: c.rdb} }

type onceScripter struct {
	redis.Scripter // nil: a Script's Run and Eval use only the two methods below
	rdb            redis.UniversalClient
}

func (o onceScripter) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return o.send(ctx, "eval", script, keys, args)
}

func (o onceScripter) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return o.send(ctx, "evalsha", sha1, keys, args)
}

func (o onceScripter) send(ctx context.Context, name, script string, keys []string, args []any) *redis.Cmd {
	cmd := scriptCmd(ctx, name, script, keys, args)
	_ = o.rdb.Process(ctx, sentOnce{cmd}) // its error is cmd's
	return cmd
}

// scriptCmd is an EVAL or EVALSHA (name) of script (source or hash), not sent.
func scriptCmd(ctx context.Context, name, script string, keys []string, args []any) *redis.Cmd {
	cmdArgs := append(make([]any, 0, 3+len(keys)+len(args)), name, script, len(keys))
	for _, k := range keys {
		cmdArgs = append(cmdArgs, k)
	}
	return redis.NewCmd(ctx, append(cmdArgs, args...)...)
}
