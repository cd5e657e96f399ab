package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

const maxBatchGroups = 128 // requests in one pipeline; the rest go in the next

// batcher sends the hot path's commands of the requests in flight in one pipeline at a time
// (bench/notes.md). A group still queued timeout after queueing fails; an ended one is not sent.
type batcher struct {
	rdb     pipeliner // nil: each call is sent alone
	timeout time.Duration

	mu       sync.Mutex
	queue    []*batchGroup
	flushing bool // a goroutine is sending the queue
}

type pipeliner interface {
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
}

// batchGroup is one request's part of a batch: a command, or a rate decision.
type batchGroup struct {
	ctx  context.Context
	due  time.Time // queued + timeout
	cmd  redis.Cmder
	step *rateStep     // instead of cmd
	sent bool          // set before done is closed
	done chan struct{} // closed once the group holds its result (or its timeout)
}

func newBatcher(rdb any, timeout time.Duration) *batcher {
	p, _ := rdb.(pipeliner)
	return &batcher{rdb: p, timeout: timeout}
}

// decide runs rate.lua for s in the next batch (alone without pipelining); s is unread after ctx's error.
func (b *batcher) decide(ctx context.Context, rdb redis.Scripter, s *rateStep) error {
	if b.rdb == nil {
		s.with = nil
		ctx, cancel := callContext(ctx, b.timeout)
		defer cancel()
		return s.alone(func(keys []string, args ...any) *redis.Cmd {
			return rateScript.Run(ctx, rdb, keys, args...)
		})
	}
	if err := b.wait(&batchGroup{ctx: ctx, step: s}); err != nil {
		return err
	}
	if redis.HasErrorPrefix(s.err, "NOSCRIPT") {
		s.err = nil
		return s.alone(func(keys []string, args ...any) *redis.Cmd {
			return b.eval(ctx, rateScript, keys, args...)
		})
	}
	return s.err
}

// runScript runs script in the next batch, bounded by b's timeout.
func (b *batcher) runScript(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	cmd := scriptCmd(ctx, "evalsha", script.Hash(), keys, args)
	if err := b.wait(&batchGroup{ctx: ctx, cmd: cmd}); err != nil {
		cmd = redis.NewCmd(ctx)
		cmd.SetErr(err)
	} else if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
		return b.eval(ctx, script, keys, args...)
	}
	return cmd
}

// eval runs script with EVAL, sent once, outside the batch, for a Redis without the script.
func (b *batcher) eval(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	ctx, cancel := callContext(ctx, b.timeout)
	defer cancel()
	return script.Eval(ctx, onceScripter{p: b.rdb}, keys, args...)
}

func (b *batcher) wait(g *batchGroup) error {
	g.due, g.done = time.Now().Add(b.timeout), make(chan struct{})
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
		if g.sent {
			return nil
		}
	case <-g.ctx.Done():
	}
	return g.ctx.Err()
}

var errBatchTimeout = fmt.Errorf("%w (queued behind a batch in flight)", errCallTimeout)

func (b *batcher) flush() {
	for {
		b.mu.Lock()
		n := min(len(b.queue), maxBatchGroups)
		if n == 0 {
			b.queue, b.flushing = nil, false
			b.mu.Unlock()
			return
		}
		q := b.queue[:n:n]
		b.queue = b.queue[n:]
		b.mu.Unlock()
		b.send(q)
	}
}

// send runs q's groups still waiting and not past due in one pipeline, due with the earliest.
func (b *batcher) send(q []*batchGroup) {
	var live []*batchGroup
	var due time.Time
	now := time.Now()
	for _, g := range q {
		switch {
		case g.ctx.Err() != nil:
		case !now.Before(g.due):
			if g.step != nil {
				g.step.err = errBatchTimeout
			} else {
				g.cmd.SetErr(errBatchTimeout)
			}
		default:
			g.sent = true
			live = append(live, g)
			if due.IsZero() || g.due.Before(due) {
				due = g.due
			}
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

// stampPipelineError puts err, unless one command's own, on those without a result (WRONGPASS).
func stampPipelineError(cmds []redis.Cmder, err error) {
	if err == nil {
		return
	}
	for _, c := range cmds {
		if errors.Is(c.Err(), err) {
			return
		}
	}
	for _, c := range cmds {
		if c.Err() == nil {
			c.SetErr(err)
		}
	}
}

// scriptCmd is an EVAL or EVALSHA (name) of script (source or hash), not sent.
func scriptCmd(ctx context.Context, name, script string, keys []string, args []any) *redis.Cmd {
	cmdArgs := []any{name, script, len(keys)}
	for _, k := range keys {
		cmdArgs = append(cmdArgs, k)
	}
	return redis.NewCmd(ctx, append(cmdArgs, args...)...)
}
