package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/petstore/orderd/internal/webhook"
)

// Webhooks is a webhook.Store in the webhook_endpoints table, a row an endpoint.
type Webhooks struct{ db *DB }

// NewWebhooks returns the webhook endpoints of db.
func NewWebhooks(db *DB) *Webhooks { return &Webhooks{db: db} }

// webhookColumns are webhook.Fields, created kept as created_at.
var webhookColumns = "id, " + strings.Replace(strings.Join(webhook.Fields, ", "), "created", "created_at", 1)

// List returns every endpoint, the oldest first.
func (s *Webhooks) List(ctx context.Context) ([]webhook.Endpoint, error) {
	rows, err := s.db.sql.QueryContext(ctx, "SELECT "+webhookColumns+" FROM webhook_endpoints ORDER BY created_at, id")
	list, err := scanRows(rows, err, scanEndpoint)
	return list, s.db.fail(ctx, err)
}

// Update reads the row and writes or deletes it in one write transaction.
func (s *Webhooks) Update(ctx context.Context, id string, change func(*webhook.Endpoint) error) error {
	return s.db.write(ctx, func(tx *sql.Tx) error {
		e, err := scanEndpoint(tx.QueryRowContext(ctx, "SELECT "+webhookColumns+" FROM webhook_endpoints WHERE id = ?", id))
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return s.db.fail(ctx, err)
		}
		if err := change(&e); err != nil {
			return err
		}
		if e.ID == "" {
			_, err = tx.ExecContext(ctx, "DELETE FROM webhook_endpoints WHERE id = ?", id)
		} else {
			args, r := []any{e.ID}, e.Record()
			for _, f := range webhook.Fields {
				args = append(args, r[f])
			}
			_, err = tx.ExecContext(ctx, "INSERT OR REPLACE INTO webhook_endpoints ("+webhookColumns+") VALUES (?"+strings.Repeat(", ?", len(args)-1)+")", args...)
		}
		return s.db.fail(ctx, err)
	})
}

// scanEndpoint reads a row of webhookColumns; SQLite turns the numbers into strings.
func scanEndpoint(row scanner) (webhook.Endpoint, error) {
	var id string
	values, r := []any{&id}, map[string]*string{}
	for _, f := range webhook.Fields {
		r[f] = new(string)
		values = append(values, r[f])
	}
	if err := row.Scan(values...); err != nil {
		return webhook.Endpoint{}, err
	}
	return webhook.FromRecord(id, func(f string) string { return *r[f] })
}
