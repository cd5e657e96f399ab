package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/webhook"
)

var _ webhook.Store = (*Webhooks)(nil)

// Webhooks is a webhook.Store in the webhook_endpoints table. A lease's expiry is this
// machine's clock, which every process on the file shares.
type Webhooks struct {
	db  *DB
	now func() time.Time
}

// NewWebhooks returns the webhook endpoints of db.
func NewWebhooks(db *DB) *Webhooks { return &Webhooks{db: db, now: time.Now} }

const webhookColumns = "id, url, types, secret, created_at, status, position, attempts, " +
	"first_failure, next_attempt, last_attempt, last_status, last_error"

// Create adds e in one statement; an id taken is refused.
func (s *Webhooks) Create(ctx context.Context, e webhook.Endpoint) error {
	types := make([]string, len(e.Types))
	for i, t := range e.Types {
		types[i] = string(t)
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		d := e.Delivery
		_, err := tx.ExecContext(ctx, "INSERT INTO webhook_endpoints ("+webhookColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			e.ID, e.URL, strings.Join(types, ","), e.Secret, e.CreatedAt.UTC().Format(timestampLayout), string(d.Status),
			d.Position, d.Attempts, nanos(d.FirstFailure), nanos(d.NextAttempt), nanos(d.LastAttempt), d.LastStatus, d.LastError)
		return err
	})
}

// List returns every endpoint, the oldest first.
func (s *Webhooks) List(ctx context.Context) ([]webhook.Endpoint, error) {
	rows, err := s.db.sql.QueryContext(ctx, "SELECT "+webhookColumns+" FROM webhook_endpoints ORDER BY created_at, id")
	list, err := scanRows(rows, err, scanEndpoint)
	return list, s.db.fail(ctx, err)
}

// Get returns the endpoint id.
func (s *Webhooks) Get(ctx context.Context, id string) (webhook.Endpoint, error) {
	e, err := scanEndpoint(s.db.sql.QueryRowContext(ctx, "SELECT "+webhookColumns+" FROM webhook_endpoints WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return webhook.Endpoint{}, fmt.Errorf("%w: %q", webhook.ErrNotFound, id)
	}
	return e, s.db.fail(ctx, err)
}

// Delete removes the endpoint, its state and its lease: one row.
func (s *Webhooks) Delete(ctx context.Context, id string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		n, err := affected(tx.ExecContext(ctx, "DELETE FROM webhook_endpoints WHERE id = ?", id))
		if err == nil && n == 0 {
			return fmt.Errorf("%w: %q", webhook.ErrNotFound, id)
		}
		return err
	})
}

// Lease takes or renews the lease in one UPDATE: free, expired or owner's own.
func (s *Webhooks) Lease(ctx context.Context, id, owner string, ttl time.Duration) (held bool, err error) {
	now := s.now()
	err = s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE webhook_endpoints SET lease_owner = ?1, lease_expires = ?2 "+
			"WHERE id = ?3 AND (lease_owner = ?1 OR lease_expires <= ?4)", owner, now.Add(ttl).UnixNano(), id, now.UnixNano())
		if n, err := affected(res, err); err != nil || n == 1 {
			held = n == 1
			return err
		}
		return s.exists(ctx, tx, id)
	})
	return held, err
}

// Renew extends the lease in one UPDATE, only while owner holds it unexpired.
func (s *Webhooks) Renew(ctx context.Context, id, owner string, ttl time.Duration) error {
	now := s.now()
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE webhook_endpoints SET lease_expires = ? WHERE id = ? AND lease_owner = ? AND lease_expires > ?",
			now.Add(ttl).UnixNano(), id, owner, now.UnixNano())
		if n, err := affected(res, err); err != nil || n == 1 {
			return err
		}
		if err := s.exists(ctx, tx, id); err != nil {
			return err
		}
		return fmt.Errorf("%w: %q", webhook.ErrLeaseLost, id)
	})
}

// Release clears the lease if owner holds it.
func (s *Webhooks) Release(ctx context.Context, id, owner string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE webhook_endpoints SET lease_owner = '', lease_expires = 0 WHERE id = ? AND lease_owner = ?", id, owner)
		return err
	})
}

// Save writes d in one UPDATE that holds only while owner's lease does.
func (s *Webhooks) Save(ctx context.Context, id, owner string, d webhook.Delivery) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE webhook_endpoints SET status = ?, position = ?, attempts = ?, first_failure = ?, "+
			"next_attempt = ?, last_attempt = ?, last_status = ?, last_error = ? WHERE id = ? AND lease_owner = ? AND lease_expires > ?",
			string(d.Status), d.Position, d.Attempts, nanos(d.FirstFailure), nanos(d.NextAttempt), nanos(d.LastAttempt),
			d.LastStatus, d.LastError, id, owner, s.now().UnixNano())
		if n, err := affected(res, err); err != nil || n == 1 {
			return err
		}
		if err := s.exists(ctx, tx, id); err != nil {
			return err
		}
		return fmt.Errorf("%w: %q", webhook.ErrLeaseLost, id)
	})
}

// Enable makes the endpoint active again from to in one UPDATE that checks it first; when it
// changes nothing, a read in the same transaction says why.
func (s *Webhooks) Enable(ctx context.Context, id, from, to string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE webhook_endpoints SET status = ?, position = ?, attempts = 0, first_failure = 0, "+
			"next_attempt = 0, last_error = '' WHERE id = ? AND status <> ? AND position = ?",
			string(webhook.StatusActive), to, id, string(webhook.StatusActive), from)
		if n, err := affected(res, err); err != nil || n == 1 {
			return err
		}
		var status, position string
		err = tx.QueryRowContext(ctx, "SELECT status, position FROM webhook_endpoints WHERE id = ?", id).Scan(&status, &position)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("%w: %q", webhook.ErrNotFound, id)
		case err != nil:
			return err
		case status == string(webhook.StatusActive):
			return fmt.Errorf("%w: %q", webhook.ErrActive, id)
		}
		return fmt.Errorf("%w: %q", webhook.ErrMoved, id)
	})
}

// write runs fn in a write transaction and commits it; fn's refusals are returned as they are.
func (s *Webhooks) write(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, done, err := s.db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer done()
	if err := fn(tx); err != nil {
		if errors.Is(err, webhook.ErrNotFound) || errors.Is(err, webhook.ErrLeaseLost) ||
			errors.Is(err, webhook.ErrActive) || errors.Is(err, webhook.ErrMoved) {
			return err
		}
		return s.db.fail(ctx, err)
	}
	return s.db.fail(ctx, s.db.commit(tx))
}

// exists returns ErrNotFound when no endpoint is id.
func (s *Webhooks) exists(ctx context.Context, tx *sql.Tx, id string) error {
	err := tx.QueryRowContext(ctx, "SELECT 1 FROM webhook_endpoints WHERE id = ?", id).Scan(new(int))
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %q", webhook.ErrNotFound, id)
	}
	return err
}

func affected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func scanEndpoint(row scanner) (webhook.Endpoint, error) {
	var (
		e                                      webhook.Endpoint
		types, createdAt, status               string
		firstFailure, nextAttempt, lastAttempt int64
	)
	d := &e.Delivery
	if err := row.Scan(&e.ID, &e.URL, &types, &e.Secret, &createdAt, &status, &d.Position, &d.Attempts,
		&firstFailure, &nextAttempt, &lastAttempt, &d.LastStatus, &d.LastError); err != nil {
		return webhook.Endpoint{}, err
	}
	if types != "" {
		for _, t := range strings.Split(types, ",") {
			e.Types = append(e.Types, order.EventType(t))
		}
	}
	d.Status = webhook.Status(status)
	d.FirstFailure, d.NextAttempt, d.LastAttempt = fromNanos(firstFailure), fromNanos(nextAttempt), fromNanos(lastAttempt)
	var err error
	if e.CreatedAt, err = time.Parse(timestampLayout, createdAt); err != nil {
		return webhook.Endpoint{}, corrupt("webhook %q: created_at %q: %w", e.ID, createdAt, err)
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
