package sqlitestore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"

	"github.com/petstore/orderd/internal/pagetoken"
)

var _ pagetoken.SecretStore = (*Secrets)(nil)

const pageTokenSecret = "page_token_secret"

// Secrets is a pagetoken.SecretStore in the settings table, shared by every process and restart.
type Secrets struct{ db *DB }

// NewSecrets returns the secret store of db.
func NewSecrets(db *DB) *Secrets { return &Secrets{db: db} }

// PageTokenSecret returns the file's secret, making it if there is none (unless another
// process's insert comes first: it is read back in the write transaction).
func (s *Secrets) PageTokenSecret(ctx context.Context) ([]byte, error) {
	secret, err := s.read(ctx, s.db.sql)
	if !errors.Is(err, sql.ErrNoRows) {
		return secret, err
	}
	fresh := make([]byte, pagetoken.MinSecretLen)
	rand.Read(fresh) // never fails (crypto/rand)
	tx, done, err := s.db.beginWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	if _, err := tx.ExecContext(ctx,
		"INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING", pageTokenSecret, fresh); err != nil {
		return nil, s.db.fail(ctx, err)
	}
	if secret, err = s.read(ctx, tx); err != nil {
		return nil, err
	}
	return secret, s.db.fail(ctx, tx.Commit())
}

// read returns sql.ErrNoRows when there is no secret.
func (s *Secrets) read(ctx context.Context, q querier) ([]byte, error) {
	var secret []byte
	err := q.QueryRowContext(ctx, "SELECT value FROM settings WHERE name = ?", pageTokenSecret).Scan(&secret)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, err
	case err != nil:
		return nil, s.db.fail(ctx, err)
	case len(secret) < pagetoken.MinSecretLen:
		return nil, corrupt("setting %s: %d bytes, want at least %d", pageTokenSecret, len(secret), pagetoken.MinSecretLen)
	}
	return secret, nil
}
