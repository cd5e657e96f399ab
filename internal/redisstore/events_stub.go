package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
)

// TEMP: a stand-in for the Redis event log another branch adds; drop it at the merge.
type Events struct{}

var errNoEvents = errors.New("redisstore: the event log is not in this branch yet")

// NewEvents is a stand-in: every call fails.
func NewEvents(redis.UniversalClient, string, time.Duration) (*Events, error) { return &Events{}, nil }

func (*Events) Events(context.Context, order.EventQuery) (order.EventPage, error) {
	return order.EventPage{}, errNoEvents
}
func (*Events) LastEventID(context.Context) (string, error)          { return "", errNoEvents }
func (*Events) WaitForEvents(context.Context, string) error          { return errNoEvents }
func (*Events) Trim(context.Context, order.Retention) (int64, error) { return 0, errNoEvents }
