package redisstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/store"
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
		{"LOADING Redis is loading the dataset in memory", store.ErrUnavailable},
		{"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", store.ErrUnavailable},
		{"CLUSTERDOWN The cluster is down", store.ErrUnavailable},
		{"TRYAGAIN Multiple keys request during rehashing of slot", store.ErrUnavailable},
		{"NOREPLICAS Not enough good replicas to write.", store.ErrUnavailable},
		{"NOAUTH Authentication required.", store.ErrUnavailable},
		{"ERR max number of clients reached", store.ErrUnavailable},
		{"EXECABORT Transaction discarded because of: LOADING Redis is loading", store.ErrUnavailable},
		{"WRONGTYPE Operation against a key holding the wrong kind of value", store.ErrCorrupt},
		{"ERR user_script:12: attempt to compare nil with number script: 3f2a…", nil},
		{"ERR wrong number of arguments for 'hset' command", nil},
		{"CROSSSLOT Keys in request don't hash to the same slot", nil},
		{"EXECABORT Transaction discarded because of previous errors.", nil},
	} {
		err := classify(ctx, replyError(tc.reply))
		if tc.want == nil {
			if errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrCorrupt) || err == nil {
				t.Errorf("%q: %v; want a plain error", tc.reply, err)
			}
		} else if !errors.Is(err, tc.want) {
			t.Errorf("%q: %v; want %v", tc.reply, err, tc.want)
		}
	}
}
