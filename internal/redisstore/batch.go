package redisstore

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// batcher sends the hot path's commands (the limiter's script with the reads of the
// versions, and the cancel script) of the requests in flight at one moment in one pipeline:
// one write and one read for all of them, instead of a round trip each. One pipeline is in
// flight at a time; what arrives meanwhile waits for the next, so batches grow with the load
// and a lone request still goes at once, in one round trip. bench/notes.md has the figures,
// and why not go-redis's own auto-pipeliner (it may send one request's commands in two
// round trips).
//
// What it keeps:
//
//   - Exactness and freshness: each command is the same command, run by Redis alone and
//     atomically as before; only the way to Redis is shared. A request's commands go
//     together, in its order, in one pipeline sent after the request began.
//   - The bound on a call: a waiter stops waiting when its call's context ends (the request's
//     own, or our timeout), without touching the batch, which runs under a context of its
//     own bounded by the same timeout. So a client that hangs up while its commands sit in a
//     shared batch fails nothing but its own wait; the commands still run (as they would on
//     a connection of its own once sent).
type batcher struct {
	rdb     pipeliner
	timeout time.Duration

	mu       sync.Mutex
	queue    []*batchGroup
	flushing bool // a goroutine is sending the queue
}

// batchGroup is one request's commands, sent together.
type batchGroup struct {
	cmds []redis.Cmder
	done chan struct{} // closed once every command holds its result
}

func newBatcher(rdb any, timeout time.Duration) *batcher {
	p, ok := rdb.(pipeliner)
	if !ok {
		return nil
	}
	return &batcher{rdb: p, timeout: timeout}
}

// do sends cmds in the next batch and waits for their results, or for ctx to end. It returns
// ctx's error when ctx ended first: the commands must then not be read (their batch may
// still be running). Otherwise each command holds its own result, error included.
func (b *batcher) do(ctx context.Context, cmds ...redis.Cmder) error {
	g := &batchGroup{cmds: cmds, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, g)
	start := !b.flushing
	b.flushing = true
	b.mu.Unlock()
	if start {
		go b.flush()
	}
	select {
	case <-g.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// flush sends the queue, batch after batch, until it is empty.
func (b *batcher) flush() {
	for {
		b.mu.Lock()
		q := b.queue
		b.queue = nil
		if len(q) == 0 {
			b.flushing = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		ctx, cancel := context.WithTimeoutCause(context.Background(), b.timeout, errCallTimeout)
		_, _ = b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, g := range q {
				for _, c := range g.cmds {
					_ = p.Process(ctx, c)
				}
			}
			return nil
		})
		cancel()
		for _, g := range q {
			close(g.done)
		}
	}
}

// runScript runs script through b when there is one (rdb otherwise), within ctx. A Redis
// that does not hold the script yet gets it with EVAL on rdb, once.
func runScript(ctx context.Context, b *batcher, rdb redis.Scripter, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	if b == nil {
		return script.Run(ctx, rdb, keys, args...)
	}
	cmd := evalShaCmd(ctx, script, keys, args...)
	if err := b.do(ctx, cmd); err != nil {
		return failedCmd(ctx, err)
	}
	if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
		return script.Eval(ctx, rdb, keys, args...)
	}
	return cmd
}

// evalShaCmd is script's EVALSHA, not sent.
func evalShaCmd(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	cmdArgs := make([]any, 0, 3+len(keys)+len(args))
	cmdArgs = append(cmdArgs, "evalsha", script.Hash(), len(keys))
	for _, k := range keys {
		cmdArgs = append(cmdArgs, k)
	}
	return redis.NewCmd(ctx, append(cmdArgs, args...)...)
}

// mgetCmd is an MGET of keys, not sent.
func mgetCmd(ctx context.Context, keys ...string) *redis.SliceCmd {
	args := make([]any, 1+len(keys))
	args[0] = "mget"
	for i, k := range keys {
		args[i+1] = k
	}
	return redis.NewSliceCmd(ctx, args...)
}

// failedCmd is a command that failed with err before it could be read.
func failedCmd(ctx context.Context, err error) *redis.Cmd {
	cmd := redis.NewCmd(ctx)
	cmd.SetErr(err)
	return cmd
}
