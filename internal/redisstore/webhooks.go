package redisstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/webhook"
)

var _ webhook.Store = (*Webhooks)(nil)

var webhookScript = script("webhook.lua")

// Webhooks is a webhook.Store in Redis: a hash an endpoint and a sorted set of their ids
// (docs/redis-layout.md), all in one slot.
type Webhooks struct{ conn }

// NewWebhooks returns the webhook endpoints of the deployment whose keys start with prefix.
func NewWebhooks(rdb redis.UniversalClient, prefix string, timeout time.Duration) (*Webhooks, error) {
	c, err := newConn(rdb, prefix, timeout)
	return &Webhooks{conn: c}, err
}

// List reads the ids, then each endpoint; one deleted in between is left out.
func (s *Webhooks) List(ctx context.Context) ([]webhook.Endpoint, error) {
	cctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	ids, err := s.rdb.ZRange(cctx, s.k.webhookIDs, 0, -1).Result()
	if err != nil {
		return nil, classify(cctx, err)
	}
	list := make([]webhook.Endpoint, 0, len(ids))
	for _, id := range ids {
		if e, _, err := s.get(ctx, id); err == nil {
			list = append(list, e)
		} else if !errors.Is(err, webhook.ErrNotFound) {
			return nil, err
		}
	}
	return list, nil
}

// Now is Redis's clock, read by a script on the endpoints' slot so that in a cluster every
// instance reads the same node's: the leases are judged by it, not by the instances' clocks.
func (s *Webhooks) Now(ctx context.Context) (time.Time, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	t, err := s.rdb.Eval(ctx, "return redis.call('TIME')", []string{s.k.webhookIDs}).Int64Slice()
	if err != nil {
		return time.Time{}, classify(ctx, err)
	}
	return time.Unix(t[0], t[1]*1000), nil
}

// Get returns the endpoint id.
func (s *Webhooks) Get(ctx context.Context, id string) (webhook.Endpoint, error) {
	e, _, err := s.get(ctx, id)
	return e, err
}

// get returns the endpoint id and its revision (ErrNotFound, and "", when there is none).
func (s *Webhooks) get(ctx context.Context, id string) (webhook.Endpoint, string, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	h, err := s.rdb.HGetAll(ctx, s.k.webhook(id)).Result()
	switch {
	case err != nil:
		return webhook.Endpoint{}, "", classify(ctx, err)
	case len(h) == 0:
		return webhook.Endpoint{}, "", fmt.Errorf("%w: %q", webhook.ErrNotFound, id)
	}
	r := make([]string, len(webhook.Fields))
	for i, f := range webhook.Fields {
		r[i] = h[f]
	}
	e, err := webhook.FromRecord(id, r)
	return e, cmp.Or(h["revision"], "0"), err
}

// Update reads the endpoint with its revision, and writes (or deletes) what change makes of
// it with webhook.lua if the revision is still the one read; otherwise it reads it again. The
// script is sent once: sent again after it ran, it would find its own write and refuse.
func (s *Webhooks) Update(ctx context.Context, id string, change func(*webhook.Endpoint) error) error {
	for {
		e, revision, err := s.get(ctx, id)
		corrupt := errors.Is(err, order.ErrCorrupt)
		if corrupt { // an endpoint that cannot be read can still be deleted
			e = webhook.Endpoint{ID: id}
		} else if err != nil && !errors.Is(err, webhook.ErrNotFound) {
			return err
		}
		if cerr := change(&e); cerr != nil || (corrupt && e.ID != "") {
			return cmp.Or(cerr, err)
		}
		args := []any{revision, id, e.CreatedAt.UnixMilli()}
		for i, v := range e.Record() {
			if e.ID != "" { // none: the script deletes the endpoint
				args = append(args, webhook.Fields[i], v)
			}
		}
		cctx, cancel := callContext(ctx, s.timeout)
		written, err := webhookScript.Run(cctx, s.once(), []string{s.k.webhook(id), s.k.webhookIDs}, args...).Int()
		cancel()
		if err != nil || written == 1 {
			return classify(cctx, err)
		}
	}
}
