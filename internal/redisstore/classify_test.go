package redisstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
)

// replyError is an error reply as go-redis gives it, for the codes no test can make a
// single redis-server send (LOADING needs a long load, CLUSTERDOWN a broken cluster…); the
// faults a test can make are in errors_test.go.
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

func TestClassifyReplies(t *testing.T) {
	ctx, cancel := callContext(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct {
		reply string
		want  error // nil: a plain error, a bug
	}{
		{"LOADING Redis is loading the dataset in memory", order.ErrUnavailable},
		{"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", order.ErrUnavailable},
		{"CLUSTERDOWN The cluster is down", order.ErrUnavailable},
		{"TRYAGAIN Multiple keys request during rehashing of slot", order.ErrUnavailable},
		{"NOREPLICAS Not enough good replicas to write.", order.ErrUnavailable},
		{"NOAUTH Authentication required.", order.ErrUnavailable},
		{"ERR max number of clients reached", order.ErrUnavailable},
		{"WRONGTYPE Operation against a key holding the wrong kind of value", order.ErrCorrupt},
		{"ERR user_script:12: attempt to compare nil with number script: 3f2a…", nil},
		{"ERR wrong number of arguments for 'hset' command", nil},
		{"CROSSSLOT Keys in request don't hash to the same slot", nil},
		{"EXECABORT Transaction discarded because of previous errors.", nil},
	} {
		err := classify(ctx, replyError(tc.reply))
		if tc.want == nil {
			if errors.Is(err, order.ErrUnavailable) || errors.Is(err, order.ErrCorrupt) || err == nil {
				t.Errorf("%q: %v; want a plain error", tc.reply, err)
			}
		} else if !errors.Is(err, tc.want) {
			t.Errorf("%q: %v; want %v", tc.reply, err, tc.want)
		}
	}
}
