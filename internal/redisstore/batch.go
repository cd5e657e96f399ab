package redisstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// maxBatchGroups bounds the requests one pipeline carries; what queued beyond it goes in the
// next pipeline, at once.
const maxBatchGroups = 128

// batcher sends the hot path's commands (the limiter's script with the reads of the
// versions, and the cancel script) of the requests in flight at one moment in one pipeline:
// one write and one read for all of them, instead of a round trip each. bench/notes.md has
// the figures, and why not go-redis's own auto-pipeliner (it may send one request's commands
// in two round trips).
//
// Natural batching, no timer: one pipeline is in flight at a time. A request that finds none
// in flight is sent at once, alone; requests that arrive while one is in flight queue, and
// all of them (up to maxBatchGroups) go in the next pipeline as soon as it returns. So a
// lone request waits for nothing, and batches grow only with the load.
//
// What it keeps:
//
//   - Exactness and freshness: each command is the same command, run by Redis alone and
//     atomically as before; only the way to Redis is shared. A request's commands go
//     together, in its order, in one pipeline sent after the request began (so one round
//     trip per request, and versions read after it began).
//   - Errors: every command ends with its own reply or with the error that kept it from
//     one. go-redis leaves a pipeline's error off the commands when it is an error reply
//     that came before any command was sent (WRONGPASS or NOAUTH while connecting), which
//     read as empty replies; do puts such an error on every command of the pipeline, so
//     each request classifies it as it would its own.
//   - The bound on a call: a waiter stops waiting when its call's context ends (the
//     request's own, or our timeout), without touching the batch, which runs under a
//     context of its own bounded by the same timeout. So a client that hangs up while its
//     commands sit in a shared batch fails nothing but its own wait. A request whose context
//     ended before its batch left is not sent at all; once sent, its commands run (as they
//     would on a connection of its own) and their result is dropped.
//   - Shutdown: closing the client fails the pipeline in flight and every later one
//     (redis: client is closed), so each waiting request ends with an outage error; the
//     flushing goroutine ends once the queue is empty.
type batcher struct {
	rdb     pipeliner
	timeout time.Duration

	mu       sync.Mutex
	queue    []*batchGroup
	flushing bool // a goroutine is sending the queue
}

// batchGroup is one request's commands, sent together.
type batchGroup struct {
	ctx  context.Context // the request's call; a group whose call ended is not sent
	cmds []redis.Cmder
	sent bool          // set before done is closed
	done chan struct{} // closed once every command sent holds its result
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
	g := &batchGroup{ctx: ctx, cmds: cmds, done: make(chan struct{})}
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
		if !g.sent {
			return ctx.Err()
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// flush sends the queue, batch after batch, until it is empty.
func (b *batcher) flush() {
	for {
		b.mu.Lock()
		n := min(len(b.queue), maxBatchGroups)
		if n == 0 {
			b.queue = nil
			b.flushing = false
			b.mu.Unlock()
			return
		}
		q := b.queue[:n:n]
		b.queue = b.queue[n:]
		b.mu.Unlock()
		b.send(q)
	}
}

// send runs the commands of q's groups whose calls are still waiting in one pipeline, and
// wakes every group of q.
func (b *batcher) send(q []*batchGroup) {
	var cmds []redis.Cmder
	for _, g := range q {
		if g.ctx.Err() != nil {
			continue // gone: not sent, so not counted
		}
		g.sent = true
		cmds = append(cmds, g.cmds...)
	}
	if len(cmds) > 0 {
		ctx, cancel := context.WithTimeoutCause(context.Background(), b.timeout, errCallTimeout)
		_, err := b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, c := range cmds {
				_ = p.Process(ctx, c)
			}
			return nil
		})
		cancel()
		stampPipelineError(cmds, err)
	}
	for _, g := range q {
		close(g.done)
	}
}

// stampPipelineError puts err, the error of the pipeline that sent cmds, on each command
// without a result, unless err is one command's own error reply (go-redis returns the first
// command's). go-redis stamps its commands with a failure to connect, write or read, but not
// with an error reply met before anything was sent, such as WRONGPASS while it
// authenticates a new connection: those commands would read as empty replies.
func stampPipelineError(cmds []redis.Cmder, err error) {
	if err == nil {
		return
	}
	for _, c := range cmds {
		if errors.Is(c.Err(), err) {
			return // a reply of Redis's to that command: the others have their own
		}
	}
	for _, c := range cmds {
		if c.Err() == nil {
			c.SetErr(err)
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
