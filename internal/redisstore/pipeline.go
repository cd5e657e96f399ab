package redisstore

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// runScripts runs script once for each of calls (its arguments), all in one pipeline, each
// call sent once (sentOnce), and returns the sum of their integer replies. A call answered
// NOSCRIPT did not run: those are sent again with the source. The calls run in order, but
// those after one that fails still run: a batch is not atomic.
func (c conn) runScripts(ctx context.Context, script *redis.Script, keys []string, calls [][]any) (int64, error) {
	ctx, cancel := callContext(ctx, c.timeout)
	defer cancel()
	var sum int64
	var errs []error
	run := func(calls [][]any, send func(queued, []any) *redis.Cmd) (again [][]any) {
		cmds := make([]*redis.Cmd, len(calls))
		all, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, args := range calls {
				cmds[i] = send(queued{p}, args)
			}
			return nil
		})
		stampPipelineError(all, err)
		for i, cmd := range cmds {
			n, err := cmd.Int64()
			switch {
			case redis.HasErrorPrefix(err, "NOSCRIPT"):
				again = append(again, calls[i])
			case err != nil:
				errs = append(errs, err)
			default:
				sum += n
			}
		}
		return again
	}
	if again := run(calls, func(q queued, args []any) *redis.Cmd { return script.EvalSha(ctx, q, keys, args...) }); len(again) > 0 {
		run(again, func(q queued, args []any) *redis.Cmd { return script.Eval(ctx, q, keys, args...) })
	}
	if len(errs) > 0 {
		return sum, classify(ctx, errs[0])
	}
	return sum, nil
}

// queued is a pipeline whose scripts are sent once (sentOnce), as onceScripter's are.
type queued struct{ redis.Pipeliner }

func (q queued) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	cmd := scriptCmd(ctx, "eval", script, keys, args)
	q.Process(ctx, sentOnce{cmd})
	return cmd
}

func (q queued) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	cmd := scriptCmd(ctx, "evalsha", sha1, keys, args)
	q.Process(ctx, sentOnce{cmd})
	return cmd
}

// inFlight runs calls to Redis up to n at a time, each on a connection of its own, so that
// Redis has the next batch of work while this process reads the reply of one and makes the
// next. The calls must commute: chunks of distinct ids do.
type inFlight struct {
	slots chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	sum   int64
	err   error
}

func newInFlight(n int) *inFlight { return &inFlight{slots: make(chan struct{}, n)} }

// run starts call once a slot is free, and returns the first error of those done so far.
func (f *inFlight) run(call func() (int64, error)) error {
	f.slots <- struct{}{}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		n, err := call()
		f.mu.Lock()
		f.sum += n
		if f.err == nil {
			f.err = err
		}
		f.mu.Unlock()
		<-f.slots
	}()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// wait waits for every call, and returns the sum of their replies and the first error.
func (f *inFlight) wait() (int64, error) {
	f.wg.Wait()
	return f.sum, f.err
}
