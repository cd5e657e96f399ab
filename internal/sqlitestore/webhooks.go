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

// Webhooks is a webhook.Store in the webhook_endpoints table, a row an endpoint.
type Webhooks struct{ db *DB }

// NewWebhooks returns the webhook endpoints of db.
func NewWebhooks(db *DB) *Webhooks { return &Webhooks{db: db} }

const webhookColumns = "id, url, types, secret, created_at, status, position, attempts, " +
	"first_failure, next_attempt, last_attempt, last_status, last_error, lease_owner, lease_expires"

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

// Delete removes the endpoint's row.
func (s *Webhooks) Delete(ctx context.Context, id string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM webhook_endpoints WHERE id = ?", id)
		if err != nil {
			return s.db.fail(ctx, err)
		}
		if n, _ := res.RowsAffected(); n == 0 { // SQLite knows it without fail
			return fmt.Errorf("%w: %q", webhook.ErrNotFound, id)
		}
		return nil
	})
}

// Update reads the row and writes it again in one write transaction.
func (s *Webhooks) Update(ctx context.Context, id string, change func(*webhook.Endpoint) error) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		e, err := scanEndpoint(tx.QueryRowContext(ctx, "SELECT "+webhookColumns+" FROM webhook_endpoints WHERE id = ?", id))
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return s.db.fail(ctx, err)
		}
		if err := change(&e); err != nil {
			return err
		}
		types := make([]string, len(e.Types))
		for i, t := range e.Types {
			types[i] = string(t)
		}
		_, err = tx.ExecContext(ctx, "INSERT OR REPLACE INTO webhook_endpoints ("+webhookColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			e.ID, e.URL, strings.Join(types, ","), e.Secret, e.CreatedAt.UTC().Format(timestampLayout), string(e.Status), e.Position,
			e.Attempts, nanos(e.FirstFailure), nanos(e.NextAttempt), nanos(e.LastAttempt), e.LastStatus, e.LastError, e.LeaseOwner, nanos(e.LeaseExpires))
		return s.db.fail(ctx, err)
	})
}

// write runs fn in a write transaction, and commits it unless fn fails.
func (s *Webhooks) write(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, done, err := s.db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer done()
	if err := fn(tx); err != nil {
		return err
	}
	return s.db.fail(ctx, s.db.commit(tx))
}

func scanEndpoint(row scanner) (webhook.Endpoint, error) {
	var (
		e                        webhook.Endpoint
		types, createdAt, status string
		times                    [4]int64
	)
	if err := row.Scan(&e.ID, &e.URL, &types, &e.Secret, &createdAt, &status, &e.Position, &e.Attempts,
		&times[0], &times[1], &times[2], &e.LastStatus, &e.LastError, &e.LeaseOwner, &times[3]); err != nil {
		return webhook.Endpoint{}, err
	}
	for t := range strings.SplitSeq(types, ",") {
		if t != "" {
			e.Types = append(e.Types, order.EventType(t))
		}
	}
	e.Status = webhook.Status(status)
	e.FirstFailure, e.NextAttempt, e.LastAttempt, e.LeaseExpires = fromNanos(times[0]), fromNanos(times[1]), fromNanos(times[2]), fromNanos(times[3])
	var err error
	if e.CreatedAt, err = time.Parse(timestampLayout, createdAt); err != nil {
		return webhook.Endpoint{}, corrupt("webhook %q: created_at %q: %w", e.ID, createdAt, err)
	}
	return e, nil
}

// nanos is t in Unix nanoseconds, 0 for the zero time: compared, not read.
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
