package redisstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// List reads the ids, then every endpoint in one pipeline; one deleted in between is left out.
func (s *Webhooks) List(ctx context.Context) ([]webhook.Endpoint, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	ids, err := s.rdb.ZRange(ctx, s.k.webhookIDs, 0, -1).Result()
	if err != nil {
		return nil, classify(ctx, err)
	}
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGetAll(ctx, s.k.webhook(id))
		}
		return nil
	})
	if err != nil {
		return nil, classify(ctx, err)
	}
	list := make([]webhook.Endpoint, 0, len(ids))
	for i, id := range ids {
		if len(cmds[i].Val()) > 0 {
			e, err := parseWebhook(id, cmds[i].Val())
			if err != nil {
				return nil, err
			}
			list = append(list, e)
		}
	}
	return list, nil
}

// Get returns the endpoint id.
func (s *Webhooks) Get(ctx context.Context, id string) (webhook.Endpoint, error) {
	e, _, err := s.get(ctx, id)
	return e, err
}

// get returns the endpoint id and its revision ("" when there is none; ErrNotFound).
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
	e, err := parseWebhook(id, h)
	return e, cmp.Or(h["revision"], "0"), err
}

// Delete removes the endpoint and its id in one MULTI.
func (s *Webhooks) Delete(ctx context.Context, id string) error {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	var deleted *redis.IntCmd
	err := s.txPipelined(ctx, func(p redis.Pipeliner) error {
		deleted = p.Del(ctx, s.k.webhook(id))
		p.ZRem(ctx, s.k.webhookIDs, id)
		return nil
	})
	if err != nil {
		return classify(ctx, err)
	}
	if deleted.Val() == 0 {
		return fmt.Errorf("%w: %q", webhook.ErrNotFound, id)
	}
	return nil
}

// Update reads the endpoint with its revision, and writes what change makes of it with
// webhook.lua if the revision is still the one read; otherwise it reads it again. The script
// is sent once: sent again after it ran, it would find its own write and refuse.
func (s *Webhooks) Update(ctx context.Context, id string, change func(*webhook.Endpoint) error) error {
	for {
		e, revision, err := s.get(ctx, id)
		if err != nil && !errors.Is(err, webhook.ErrNotFound) {
			return err
		}
		if err := change(&e); err != nil {
			return err
		}
		types := make([]string, len(e.Types))
		for i, t := range e.Types {
			types[i] = string(t)
		}
		args := []any{revision, id, e.CreatedAt.UnixMilli(), "url", e.URL, "types", strings.Join(types, ","), "secret", e.Secret,
			"created", e.CreatedAt.UnixNano(), "status", string(e.Status), "position", e.Position, "attempts", e.Attempts,
			"first_failure", nanos(e.FirstFailure), "next_attempt", nanos(e.NextAttempt), "last_attempt", nanos(e.LastAttempt),
			"last_status", e.LastStatus, "last_error", e.LastError, "lease_owner", e.LeaseOwner, "lease_expires", nanos(e.LeaseExpires)}
		cctx, cancel := callContext(ctx, s.timeout)
		written, err := webhookScript.Run(cctx, s.once(), []string{s.k.webhook(id), s.k.webhookIDs}, args...).Int()
		cancel()
		if err != nil || written == 1 {
			return classify(cctx, err)
		}
	}
}

func parseWebhook(id string, h map[string]string) (webhook.Endpoint, error) {
	e := webhook.Endpoint{ID: id, URL: h["url"], Secret: h["secret"], LeaseOwner: h["lease_owner"]}
	for t := range strings.SplitSeq(h["types"], ",") {
		if t != "" {
			e.Types = append(e.Types, order.EventType(t))
		}
	}
	e.Status, e.Position, e.LastError = webhook.Status(h["status"]), h["position"], h["last_error"]
	var errs []error
	integer := func(v string) int64 {
		n, err := strconv.ParseInt(v, 10, 64)
		errs = append(errs, err)
		return n
	}
	e.CreatedAt = fromNanos(integer(h["created"]))
	e.Attempts, e.LastStatus = int(integer(h["attempts"])), int(integer(h["last_status"]))
	e.FirstFailure, e.NextAttempt, e.LastAttempt = fromNanos(integer(h["first_failure"])), fromNanos(integer(h["next_attempt"])), fromNanos(integer(h["last_attempt"]))
	e.LeaseExpires = fromNanos(integer(cmp.Or(h["lease_expires"], "0"))) // none before leases were kept here
	if err := errors.Join(errs...); err != nil || e.URL == "" || e.CreatedAt.IsZero() {
		return webhook.Endpoint{}, fmt.Errorf("%w: webhook %s: %v", order.ErrCorrupt, id, err)
	}
	return e, nil
}

// nanos is t in Unix nanoseconds, 0 for the zero time.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
