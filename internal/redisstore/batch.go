package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// maxBatchGroups bounds the requests one pipeline carries; what queued beyond it goes in the
// next pipeline, at once.
const maxBatchGroups = 128

// batcher sends the hot path's commands (the limiter's decisions with the reads of the
// versions, and the cancel script) of the requests in flight at one moment in one pipeline:
// one write and one read for all of them, instead of a round trip each. The decisions of one
// caller in a batch go in one call of the limiter's script, with one read of the versions
// for all (ratebatch.go). bench/notes.md has the figures, and why not go-redis's own
// auto-pipeliner (it may send one request's commands in two round trips).
//
// Natural batching, no timer: one pipeline is in flight at a time. A request that finds none
// in flight is sent at once, alone; requests that arrive while one is in flight queue, and
// all of them (up to maxBatchGroups) go in the next pipeline as soon as it returns. So a
// lone request waits for nothing, and batches grow only with the load.
//
// What it keeps:
//
//   - Exactness and freshness: each command is the same command, run by Redis alone and
//     atomically as before, and a call of rate.lua for several requests decides each as
//     its own call would, in the order they were queued; only the way to Redis is shared. A
//     request's commands go together, in its order, in one pipeline sent after the request
//     began (so one round trip per request, and versions read after it began).
//   - Errors: every command ends with its own reply or with the error that kept it from
//     one. go-redis leaves a pipeline's error off the commands when it is an error reply
//     that came before any command was sent (WRONGPASS or NOAUTH while connecting), which
//     read as empty replies; send puts such an error on every command of the pipeline
//     (stampPipelineError), so each request classifies it as it would its own.
//   - The bound on a call: each group is due back within timeout of when it was queued.
//     A batch runs under a context of its own whose deadline is the earliest of its
//     groups', and a group still queued when its time is up is not sent but fails as a
//     timeout (an outage, for classify). Batches leave in the order their groups were
//     queued, so a batch in flight is due no later than any group queued behind it: every
//     group ends within its bound with one timer per batch, not one per request. A waiter
//     also stops waiting when its own context ends (the client hung up), without touching
//     the batch: a client that hangs up while its commands sit in a shared batch fails
//     nothing but its own wait. A request whose context ended before its batch left is not
//     sent at all; once sent, its commands run (as they would on a connection of their
//     own) and their result is dropped.
//   - Sent once: a batch whose connection breaks fails as an outage; it is never sent
//     again, since it may have run (once.go).
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

// batchGroup is one request's commands, sent together, or its rate decision.
type batchGroup struct {
	ctx  context.Context // the request's; a group whose request ended is not sent
	due  time.Time       // queued + timeout: the group's results, or its timeout, by then
	cmds []redis.Cmder
	step *rateStep     // instead of cmds
	sent bool          // set before done is closed
	done chan struct{} // closed once every command holds its result (or its timeout)
}

// fail ends g's commands, or its step, with err.
func (g *batchGroup) fail(err error) {
	for _, c := range g.cmds {
		c.SetErr(err)
	}
	if g.step != nil {
		g.step.err = err
	}
}

// newBatcher returns the batcher of rdb's calls. A client that does not pipeline gets one
// that sends each call alone, bounded by the same timeout (rdb nil in it).
func newBatcher(rdb any, timeout time.Duration) *batcher {
	p, _ := rdb.(pipeliner)
	return &batcher{rdb: p, timeout: timeout}
}

// do sends cmds in the next batch and waits for their results, or for ctx to end; the batch
// bounds the wait by the batcher's timeout (see batcher), so ctx needs no deadline of its
// own. It returns ctx's error when ctx ended first: the commands must then not be read
// (their batch may still be running). Otherwise each command holds its own result, error
// included: errBatchTimeout when the bound passed before its batch could leave.
func (b *batcher) do(ctx context.Context, cmds ...redis.Cmder) error {
	return b.wait(&batchGroup{ctx: ctx, cmds: cmds})
}

// decide runs rate.lua for s as runScript runs a script: in the next batch, with the reads of
// the versions when s asks for them (on a Cluster, go-redis sends each node its part at the
// same time), or alone on a client that does not pipeline (and then without them). A Redis
// that does not hold the script yet gets it with EVAL on rdb, once, afterwards; the versions
// read stay good, since they were read after the request began. It returns ctx's error when
// ctx ended first (the batch may still run: s must then not be read), and otherwise the
// call's error, for classify, with s holding its outcome.
func (b *batcher) decide(ctx context.Context, rdb redis.Scripter, s *rateStep) error {
	if b.rdb == nil {
		s.with = nil
		return s.alone(func(keys []string, args ...any) *redis.Cmd {
			return b.runScript(ctx, rdb, rateScript, keys, args...)
		})
	}
	if err := b.wait(&batchGroup{ctx: ctx, step: s}); err != nil {
		return err
	}
	if redis.HasErrorPrefix(s.err, "NOSCRIPT") {
		s.err = nil
		return s.alone(func(keys []string, args ...any) *redis.Cmd {
			return b.eval(ctx, rdb, rateScript, keys, args...)
		})
	}
	return s.err
}

// wait queues g and waits for its batch, or for its context to end.
func (b *batcher) wait(g *batchGroup) error {
	g.due, g.done = time.Now().Add(b.timeout), make(chan struct{})
	ctx := g.ctx
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
		if !g.sent && ctx.Err() != nil {
			return ctx.Err()
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// errBatchTimeout is the error of a command whose group's bound passed while it was queued.
var errBatchTimeout = fmt.Errorf("%w (queued behind a batch in flight)", errCallTimeout)

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

// send runs the commands of q's groups whose requests are still waiting, and whose bound has
// not passed, in one pipeline due when the earliest of them is; it wakes every group of q.
func (b *batcher) send(q []*batchGroup) {
	var live []*batchGroup
	var due time.Time
	now := time.Now()
	for _, g := range q {
		if g.ctx.Err() != nil {
			continue // gone: not sent, so not counted
		}
		if !now.Before(g.due) {
			g.fail(errBatchTimeout) // not sent: an outage for this request
			continue
		}
		g.sent = true
		live = append(live, g)
		if due.IsZero() || g.due.Before(due) {
			due = g.due
		}
	}
	if len(live) > 0 {
		ctx, cancel := context.WithDeadlineCause(context.Background(), due, errCallTimeout)
		cmds, spread := pipelineOf(ctx, live)
		_, err := b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, c := range cmds {
				_ = p.Process(ctx, sentOnce{c})
			}
			return nil
		})
		cancel()
		stampPipelineError(cmds, err)
		spread()
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

// runScript runs script within ctx, bounded by b's timeout: queued in the next batch, or in a
// call of its own on a client that does not pipeline. So a caller bounds nothing itself, and
// classifies the error with its own ctx. A Redis that does not hold the script yet gets it
// with EVAL on rdb, once.
func (b *batcher) runScript(ctx context.Context, rdb redis.Scripter, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	if b.rdb == nil {
		ctx, cancel := callContext(ctx, b.timeout)
		defer cancel()
		return script.Run(ctx, rdb, keys, args...)
	}
	cmd := evalShaCmd(ctx, script, keys, args...)
	if err := b.do(ctx, cmd); err != nil {
		return failedCmd(ctx, err)
	}
	if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
		return b.eval(ctx, rdb, script, keys, args...)
	}
	return cmd
}

// eval runs script with EVAL, outside the batch, within the batcher's timeout: for a Redis
// that does not hold the script yet. Sent once, as the batch is (once.go).
func (b *batcher) eval(ctx context.Context, rdb redis.Scripter, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	ctx, cancel := callContext(ctx, b.timeout)
	defer cancel()
	if b.rdb != nil {
		rdb = onceScripter{p: b.rdb}
	}
	return script.Eval(ctx, rdb, keys, args...)
}

// evalShaCmd is script's EVALSHA, not sent.
func evalShaCmd(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	return scriptCmd(ctx, "evalsha", script.Hash(), keys, args)
}

// scriptCmd is an EVAL or EVALSHA (name) of script (its source or its hash), not sent.
func scriptCmd(ctx context.Context, name, script string, keys []string, args []any) *redis.Cmd {
	cmdArgs := make([]any, 0, 3+len(keys)+len(args))
	cmdArgs = append(cmdArgs, name, script, len(keys))
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
