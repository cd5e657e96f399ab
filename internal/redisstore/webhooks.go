package redisstore

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/webhook"
)

// Webhooks is a webhook.Store in Redis: a hash an endpoint and a sorted set of ids, in one slot.
type Webhooks struct{ conn }

func NewWebhooks(rdb redis.UniversalClient, prefix string, timeout time.Duration) (*Webhooks, error) {
	c, err := newConn(rdb, prefix, timeout)
	return &Webhooks{conn: c}, err
}

// List reads the ids, then each endpoint.
func (s *Webhooks) List(ctx context.Context) ([]webhook.Endpoint, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	ids, err := s.rdb.ZRange(ctx, s.k.webhookIDs, 0, -1).Result()
	list := make([]webhook.Endpoint, 0, len(ids))
	for _, id := range ids {
		if e, err := s.get(ctx, s.rdb, id); err != nil {
			return nil, classify(ctx, err)
		} else if e.ID != "" {
			list = append(list, e)
		}
	}
	return list, classify(ctx, err)
}

// Now is Redis's clock, read on the endpoints' slot: every instance judges leases by one node's.
func (s *Webhooks) Now(ctx context.Context) (time.Time, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	t, err := s.rdb.Eval(ctx, "return redis.call('TIME')", []string{s.k.webhookIDs}).Int64Slice()
	if err != nil {
		return time.Time{}, classify(ctx, err)
	}
	return time.Unix(t[0], t[1]*1000), nil
}

// get reads endpoint id (none: zero) with the client or a transaction, errors unclassified.
func (s *Webhooks) get(ctx context.Context, c redis.Cmdable, id string) (webhook.Endpoint, error) {
	h, err := c.HGetAll(ctx, s.k.webhook(id)).Result()
	if err != nil || len(h) == 0 {
		return webhook.Endpoint{}, err
	}
	return webhook.FromRecord(id, func(f string) string { return h[f] })
}

// Update reads the endpoint under WATCH and writes it in a MULTI. One that cannot be read can only be deleted.
func (s *Webhooks) Update(ctx context.Context, id string, change func(*webhook.Endpoint) error) error {
	key := s.k.webhook(id)
	for {
		var refused error
		cctx, cancel := callContext(ctx, s.timeout)
		err := s.rdb.Watch(cctx, func(tx *redis.Tx) error {
			e, err := s.get(cctx, tx, id) // corrupt: only its ID
			corrupt := errors.Is(err, order.ErrCorrupt)
			if err != nil && !corrupt {
				return err
			}
			if refused = change(&e); refused != nil || (corrupt && e.ID != "") {
				return err
			}
			_, err = tx.TxPipelined(cctx, func(p redis.Pipeliner) error {
				if e.ID == "" {
					p.Del(cctx, key)
					return p.ZRem(cctx, s.k.webhookIDs, id).Err()
				}
				p.HSet(cctx, key, e.Record())
				return p.ZAdd(cctx, s.k.webhookIDs, redis.Z{Score: float64(e.CreatedAt.UnixMilli()), Member: id}).Err()
			})
			return err
		}, key)
		cancel()
		if refused != nil || !errors.Is(err, redis.TxFailedErr) {
			return cmp.Or(refused, classify(cctx, err))
		}
	}
}
