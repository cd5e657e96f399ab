package redisstore

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// A command that may have run is never sent again. When a connection breaks after a command
// was written (its reply lost on the way back), Redis may have run it, and a write run twice
// answers wrongly: rate.lua counts its callers again, an added key answers that its name is
// taken, a cancel that the order was already cancelled. go-redis sends such a command again
// unless it says NoRetry: a single node's client up to MaxRetries times (Open sets none), a
// Cluster's on the loop that follows MOVED and ASK, up to MaxRedirects, whatever MaxRetries
// says. So the batches (batch.go) and the scripts that write send their commands as
// sentOnce, and a failure to hear back is an outage, as any other (classify).

// sentOnce is a command go-redis must not send again once it may have run. A pipeline with
// one is not resent either; MOVED and ASK, which say the command did not run, are still
// followed.
type sentOnce struct{ redis.Cmder }

// NoRetry is true: see sentOnce.
func (sentOnce) NoRetry() bool { return true }

// sendOnce sends cmd, as sentOnce, in a pipeline of its own (a Cluster client routes a
// pipeline's commands by their keys, as it does a command's).
func sendOnce(ctx context.Context, p pipeliner, cmd redis.Cmder) {
	_, err := p.Pipelined(ctx, func(pipe redis.Pipeliner) error { return pipe.Process(ctx, sentOnce{cmd}) })
	stampPipelineError([]redis.Cmder{cmd}, err)
}

// onceScripter runs scripts on p with each EVAL and EVALSHA sent once (sendOnce): a
// script's Run and Eval on it, the only calls it serves, never send a write twice.
type onceScripter struct {
	redis.Scripter // nil: Run and Eval use only the two methods below
	p              pipeliner
}

func (o onceScripter) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	cmd := scriptCmd(ctx, "eval", script, keys, args)
	sendOnce(ctx, o.p, cmd)
	return cmd
}

func (o onceScripter) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	cmd := scriptCmd(ctx, "evalsha", sha1, keys, args)
	sendOnce(ctx, o.p, cmd)
	return cmd
}
