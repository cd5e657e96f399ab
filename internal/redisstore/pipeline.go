package redisstore

import (
	"context"

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
