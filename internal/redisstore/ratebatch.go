package redisstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// rateStep is one request's rate-limit decision in a batch (one rate.lua call per caller).
type rateStep struct {
	key    string   // the caller's hash
	limits [4]int64 // rate.lua's first arguments: per minute, per day, ban after, ban for (ms)
	now    int64    // the request's time, Unix ms
	with   *names   // the deployment whose versions to read with the decision; nil for none

	// Set before the group's done is closed; bad is a reply that is not the script's.
	outcome        [outcomeLen]int64
	err, bad       error
	orders, keyVer *redis.SliceCmd
}

// outcomeLen is the numbers rate.lua returns for each request.
const outcomeLen = 6

// merged is one call of rate.lua for the steps of one caller with one set of limits.
type merged struct {
	cmd   *redis.Cmd
	steps []*rateStep
}

// pipelineOf returns groups' commands, merged by caller; spread hands each step its replies.
func pipelineOf(ctx context.Context, groups []*batchGroup) (cmds []redis.Cmder, spread func()) {
	type caller struct {
		key    string
		limits [4]int64
	}
	var calls []*merged
	byCaller := map[caller]*merged{}
	reads := map[string][2]*redis.SliceCmd{} // by prefix: the orders' and the keys' versions
	for _, g := range groups {
		s := g.step
		if s == nil {
			cmds = append(cmds, g.cmd)
			continue
		}
		c := caller{s.key, s.limits}
		m := byCaller[c]
		if m == nil {
			m = &merged{}
			byCaller[c] = m
			calls = append(calls, m)
		}
		m.steps = append(m.steps, s)
		if s.with != nil {
			r, ok := reads[s.with.prefix]
			if !ok {
				r = [2]*redis.SliceCmd{
					redis.NewSliceCmd(ctx, "mget", s.with.ordersVersion, s.with.ordersGeneration),
					redis.NewSliceCmd(ctx, "mget", s.with.keysVersion, s.with.keysGeneration),
				}
				reads[s.with.prefix] = r
				cmds = append(cmds, r[0], r[1])
			}
			s.orders, s.keyVer = r[0], r[1]
		}
	}
	for _, m := range calls {
		m.cmd = scriptCmd(ctx, "evalsha", rateScript.Hash(), []string{m.steps[0].key}, rateArgs(m.steps))
		cmds = append(cmds, m.cmd)
	}
	return cmds, func() {
		for _, m := range calls {
			m.spread()
		}
	}
}

// alone decides s in a call of its own, which run makes.
func (s *rateStep) alone(run func(keys []string, args ...any) *redis.Cmd) error {
	m := &merged{steps: []*rateStep{s}}
	m.cmd = run([]string{s.key}, rateArgs(m.steps)...)
	m.spread()
	return s.err
}

// rateArgs are rate.lua's arguments for steps, which share a caller and limits.
func rateArgs(steps []*rateStep) []any {
	l := steps[0].limits
	args := []any{l[0], l[1], l[2], l[3]}
	for _, s := range steps {
		args = append(args, strconv.FormatInt(s.now, 10))
	}
	return args
}

// spread hands each step its numbers of the reply, or the error.
func (m *merged) spread() {
	if err := m.cmd.Err(); err != nil {
		for _, s := range m.steps {
			s.err = err
		}
		return
	}
	res, err := m.cmd.Int64Slice()
	if err == nil && len(res) != outcomeLen*len(m.steps) {
		err = fmt.Errorf("%d values for %d requests", len(res), len(m.steps))
	}
	for i, s := range m.steps {
		if err != nil {
			s.bad = fmt.Errorf("rate.lua returned %v: %w", m.cmd.Val(), err)
		} else {
			copy(s.outcome[:], res[outcomeLen*i:])
		}
	}
}
