package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/petstore/orderd/internal/order"
	"github.com/redis/go-redis/v9"
)

// errCallTimeout is the cause of a call's context that our own bound ended.
var errCallTimeout = errors.New("redis did not answer within the call timeout")

// classify wraps an outage in order.ErrUnavailable (never a context error), WRONGTYPE in
// order.ErrCorrupt, and returns the request's own end as its context error.
func classify(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, order.ErrUnavailable) || errors.Is(err, order.ErrCorrupt) {
		return err
	}
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, errCallTimeout) {
		return ctx.Err()
	}
	var reply redis.Error
	if errors.As(err, &reply) {
		msg := reply.Error()
		if _, reason, ok := strings.Cut(msg, "EXECABORT Transaction discarded because of: "); ok {
			msg = reason // Redis names why it refused the transaction: judge that
		}
		code, _, _ := strings.Cut(msg, " ")
		switch code {
		// States of the server or the deployment (NOPERM: the ACL user's rights), not of a request;
		// an error raised by redis.call in a script keeps its code, one of the script itself is ERR.
		case "LOADING", "BUSY", "OOM", "MISCONF", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN",
			"NOREPLICAS", "NOPERM", "NOAUTH", "WRONGPASS", "DENIED", "UNKILLABLE":
			return fmt.Errorf("%w: redis: %w", order.ErrUnavailable, err)
		case "ERR":
			if strings.HasPrefix(msg, "ERR max number of clients reached") { // about the server
				return fmt.Errorf("%w: redis: %w", order.ErrUnavailable, err)
			}
		case "WRONGTYPE":
			return fmt.Errorf("%w: redis: %w", order.ErrCorrupt, err)
		}
		return fmt.Errorf("redis: %w", err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// Our bound ended the call: keep the context error out of the chain.
		return fmt.Errorf("%w: redis: %w (%v)", order.ErrUnavailable, errCallTimeout, err)
	}
	return fmt.Errorf("%w: redis: %w", order.ErrUnavailable, err)
}
