package redisstore

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/plan"
)

// readyCaller is the caller Ready decides for: not a caller id package ratelimit builds, so
// no request ever counts in its windows.
const readyCaller = "ready:probe"

// readyLimits never refuse the probe, so that every probe writes.
var readyLimits = plan.Limits{PerMinute: 1 << 50, PerDay: 1 << 50}

// Ready reports whether Redis can do the work of a request now: it makes one rate-limit
// decision (rate.lua, a read and a write) for a probe caller, and returns what classify
// makes of its error. A PING would not do: a Redis out of memory, a read-only replica, a
// server whose disk fails (MISCONF), or an ACL user that may not run the service's scripts
// all answer PING while refusing every request; so would a server running a long script
// (BUSY) to a connection that is already authenticated. The decision is the one step every
// request under /v1 takes, so the probe fails exactly when requests cannot be decided, and
// classify names the failure as it does for them: store.ErrUnavailable for an outage. It
// costs one round trip; the probe's hash expires as any caller's does. On Cluster, it checks
// the node that holds the probe's slot.
func Ready(ctx context.Context, rdb redis.Scripter, prefix string, timeout time.Duration) error {
	l, err := NewLimiter(rdb, LimiterOptions{Prefix: prefix, Timeout: timeout})
	if err != nil {
		return err
	}
	_, err = l.Allow(ctx, readyCaller, readyLimits)
	return err
}
