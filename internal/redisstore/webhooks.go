package redisstore

import (
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

// Webhooks is a webhook.Store in Redis: a hash per endpoint, a sorted set of their ids, and a
// lease key per endpoint that expires by itself (docs/redis-layout.md), all in one slot.
type Webhooks struct{ conn }

// NewWebhooks returns the webhook endpoints of the deployment whose keys start with prefix.
func NewWebhooks(rdb redis.UniversalClient, prefix string, timeout time.Duration) (*Webhooks, error) {
	c, err := newConn(rdb, prefix, timeout)
	return &Webhooks{conn: c}, err
}

// Create adds e with one script: the id checked unused and the endpoint indexed together.
func (s *Webhooks) Create(ctx context.Context, e webhook.Endpoint) error {
	if err := checkWebhookID(e.ID); err != nil {
		return err
	}
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	types := make([]string, len(e.Types))
	for i, t := range e.Types {
		types[i] = string(t)
	}
	args := []any{e.ID, e.CreatedAt.UnixMilli(),
		"url", e.URL, "types", strings.Join(types, ","), "secret", e.Secret, "created", e.CreatedAt.UnixNano()}
	args = append(args, deliveryFields(e.Delivery)...)
	added, err := createWebhookScript.Run(ctx, s.once(), []string{s.k.webhook(e.ID), s.k.webhookIDs}, args...).Int()
	if err != nil {
		return fmt.Errorf("webhook %s: %w", e.ID, classify(ctx, err))
	}
	if added == 0 {
		return fmt.Errorf("webhook %s: the id is taken", e.ID)
	}
	return nil
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
		if len(cmds[i].Val()) == 0 {
			continue
		}
		e, err := parseWebhook(id, cmds[i].Val())
		if err != nil {
			return nil, err
		}
		list = append(list, e)
	}
	return list, nil
}

// Get returns the endpoint id.
func (s *Webhooks) Get(ctx context.Context, id string) (webhook.Endpoint, error) {
	if err := checkWebhookID(id); err != nil {
		return webhook.Endpoint{}, err
	}
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	h, err := s.rdb.HGetAll(ctx, s.k.webhook(id)).Result()
	if err != nil {
		return webhook.Endpoint{}, classify(ctx, err)
	}
	if len(h) == 0 {
		return webhook.Endpoint{}, fmt.Errorf("%w: %q", webhook.ErrNotFound, id)
	}
	return parseWebhook(id, h)
}

// Delete removes the endpoint, its lease and its id in one MULTI.
func (s *Webhooks) Delete(ctx context.Context, id string) error {
	if err := checkWebhookID(id); err != nil {
		return err
	}
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	var deleted *redis.IntCmd
	err := s.txPipelined(ctx, func(p redis.Pipeliner) error {
		deleted = p.Del(ctx, s.k.webhook(id))
		p.Del(ctx, s.k.webhookLease(id))
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

// Lease takes or renews the lease with one script: SET … PX when free or owner's own.
func (s *Webhooks) Lease(ctx context.Context, id, owner string, ttl time.Duration) (bool, error) {
	return s.lease(ctx, id, owner, ttl, "take")
}

// Renew renews the lease with the same script, only while owner holds it.
func (s *Webhooks) Renew(ctx context.Context, id, owner string, ttl time.Duration) error {
	held, err := s.lease(ctx, id, owner, ttl, "renew")
	if err == nil && !held {
		err = fmt.Errorf("%w: %q", webhook.ErrLeaseLost, id)
	}
	return err
}

func (s *Webhooks) lease(ctx context.Context, id, owner string, ttl time.Duration, mode string) (bool, error) {
	if err := checkWebhookID(id); err != nil {
		return false, err
	}
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	r, err := leaseWebhookScript.Run(ctx, s.rdb, []string{s.k.webhook(id), s.k.webhookLease(id)}, owner, max(ttl.Milliseconds(), 1), mode).Int()
	switch {
	case err != nil:
		return false, classify(ctx, err)
	case r < 0:
		return false, fmt.Errorf("%w: %q", webhook.ErrNotFound, id)
	}
	return r == 1, nil
}

// Release deletes the lease if owner holds it.
func (s *Webhooks) Release(ctx context.Context, id, owner string) error {
	if err := checkWebhookID(id); err != nil {
		return err
	}
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	return classify(ctx, releaseWebhookScript.Run(ctx, s.rdb, []string{s.k.webhookLease(id)}, owner).Err())
}

// Save writes d with one script, only while owner holds the lease.
func (s *Webhooks) Save(ctx context.Context, id, owner string, d webhook.Delivery) error {
	if err := checkWebhookID(id); err != nil {
		return err
	}
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	args := append([]any{owner}, deliveryFields(d)...)
	r, err := saveWebhookScript.Run(ctx, s.rdb, []string{s.k.webhook(id), s.k.webhookLease(id)}, args...).Int()
	switch {
	case err != nil:
		return classify(ctx, err)
	case r < 0:
		return fmt.Errorf("%w: %q", webhook.ErrNotFound, id)
	case r == 0:
		return fmt.Errorf("%w: %q", webhook.ErrLeaseLost, id)
	}
	return nil
}

// Enable makes the endpoint active again from to with one script that checks it first; it is
// sent once, for a retry of one that ran would be refused as active.
func (s *Webhooks) Enable(ctx context.Context, id, from, to string) error {
	if err := checkWebhookID(id); err != nil {
		return err
	}
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	r, err := enableWebhookScript.Run(ctx, s.once(), []string{s.k.webhook(id)}, from, to).Int()
	switch {
	case err != nil:
		return classify(ctx, err)
	case r == -1:
		return fmt.Errorf("%w: %q", webhook.ErrNotFound, id)
	case r == 0:
		return fmt.Errorf("%w: %q", webhook.ErrActive, id)
	case r == -2:
		return fmt.Errorf("%w: %q", webhook.ErrMoved, id)
	}
	return nil
}

// checkWebhookID refuses an id that could not be an endpoint's: a brace would move its keys
// to another slot.
func checkWebhookID(id string) error {
	if id == "" || strings.ContainsAny(id, "{} ") {
		return fmt.Errorf("%w: %q", webhook.ErrNotFound, id)
	}
	return nil
}

// deliveryFields are d's hash fields and values; times are Unix nanoseconds, 0 for none.
func deliveryFields(d webhook.Delivery) []any {
	return []any{"status", string(d.Status), "position", d.Position, "attempts", d.Attempts,
		"first_failure", webhookNanos(d.FirstFailure), "next_attempt", webhookNanos(d.NextAttempt), "last_attempt", webhookNanos(d.LastAttempt),
		"last_status", d.LastStatus, "last_error", d.LastError}
}

func parseWebhook(id string, h map[string]string) (webhook.Endpoint, error) {
	e := webhook.Endpoint{ID: id, URL: h["url"], Secret: h["secret"]}
	if h["types"] != "" {
		for _, t := range strings.Split(h["types"], ",") {
			e.Types = append(e.Types, order.EventType(t))
		}
	}
	d := &e.Delivery
	d.Status, d.Position, d.LastError = webhook.Status(h["status"]), h["position"], h["last_error"]
	var errs []error
	integer := func(field string) int64 {
		n, err := strconv.ParseInt(h[field], 10, 64)
		errs = append(errs, err)
		return n
	}
	e.CreatedAt = webhookTime(integer("created"))
	d.Attempts, d.LastStatus = int(integer("attempts")), int(integer("last_status"))
	d.FirstFailure, d.NextAttempt, d.LastAttempt = webhookTime(integer("first_failure")), webhookTime(integer("next_attempt")), webhookTime(integer("last_attempt"))
	if err := errors.Join(errs...); err != nil || e.URL == "" || e.CreatedAt.IsZero() {
		return webhook.Endpoint{}, fmt.Errorf("%w: webhook %s: %v", order.ErrCorrupt, id, err)
	}
	return e, nil
}

func webhookNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func webhookTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
