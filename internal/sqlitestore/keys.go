package sqlitestore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/pagetoken"
)

// Keys is an order.KeyStore in the api_keys table; other processes' changes count from the next request.
type Keys struct{ db *DB }

// NewKeys returns the key store of db.
func NewKeys(db *DB) *Keys { return &Keys{db: db} }

const keyColumns = "name, plan, per_minute, per_day, prefix, hash, created_at"

// Add stores k if no key has its name, in one statement: atomic for every process. The
// schema's CHECK refuses a createdAt outside the years 0000 to 9999.
func (s *Keys) Add(ctx context.Context, k order.Key) error {
	if err := k.Validate(); err != nil {
		return err
	}
	return s.db.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, "INSERT INTO api_keys ("+keyColumns+") VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING RETURNING name",
			k.Name, string(k.Plan), k.Custom.PerMinute, k.Custom.PerDay, k.Prefix, string(k.Hash), k.CreatedAt.UTC().Format(timestampLayout)).Scan(new(string))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %q", order.ErrNameTaken, k.Name)
		}
		return s.db.fail(ctx, err)
	})
}

// List returns every key, sorted by name.
func (s *Keys) List(ctx context.Context) ([]order.Key, error) {
	rows, err := s.db.sql.QueryContext(ctx, "SELECT "+keyColumns+" FROM api_keys ORDER BY name")
	keys, err := scanRows(rows, err, scanKey)
	return keys, s.db.fail(ctx, err)
}

// Revoke removes the key named nameOrPrefix, else the first by name with that prefix: names,
// which an operator chose, first.
func (s *Keys) Revoke(ctx context.Context, nameOrPrefix string) (k order.Key, err error) {
	const q = "DELETE FROM api_keys WHERE name = coalesce((SELECT name FROM api_keys WHERE name = ?1), " +
		"(SELECT name FROM api_keys WHERE ?2 AND prefix = ?1 ORDER BY name LIMIT 1)) RETURNING " + keyColumns
	err = s.db.write(ctx, func(tx *sql.Tx) (err error) {
		k, err = scanKey(tx.QueryRowContext(ctx, q, nameOrPrefix, order.LooksLikePrefix(nameOrPrefix)))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %q", order.ErrKeyNotFound, nameOrPrefix)
		}
		return s.db.fail(ctx, err)
	})
	return k, err
}

// scanKey reads the keyColumns of a row; one the service cannot use is ErrCorrupt, named.
func scanKey(row scanner) (k order.Key, err error) {
	var planName, hash, createdAt string
	if err := row.Scan(&k.Name, &planName, &k.Custom.PerMinute, &k.Custom.PerDay, &k.Prefix, &hash, &createdAt); err != nil {
		return order.Key{}, err
	}
	k.Plan, k.Hash = order.Plan(planName), order.Hash(hash)
	if k.CreatedAt, err = parseTime(createdAt); err != nil {
		return order.Key{}, corrupt("key %q: createdAt %q: %w", k.Name, createdAt, err)
	}
	if err := k.ValidateStored(); err != nil { // a name from before CheckName's rules still reads
		return order.Key{}, corrupt("%w", err)
	}
	return k, nil
}

// Secrets is a pagetoken.SecretStore in the settings table, shared by every process and restart.
type Secrets struct{ db *DB }

// NewSecrets returns the secret store of db.
func NewSecrets(db *DB) *Secrets { return &Secrets{db: db} }

// PageTokenSecret returns the file's secret, making it if there is none, unless another
// process's insert comes first: the insert then returns that one.
func (s *Secrets) PageTokenSecret(ctx context.Context) (secret []byte, err error) {
	err = s.db.sql.QueryRowContext(ctx, "SELECT value FROM settings WHERE name = 'page_token_secret'").Scan(&secret)
	if errors.Is(err, sql.ErrNoRows) {
		err = s.db.write(ctx, func(tx *sql.Tx) error {
			return s.db.fail(ctx, tx.QueryRowContext(ctx, "INSERT INTO settings (name, value) VALUES ('page_token_secret', ?) "+
				"ON CONFLICT (name) DO UPDATE SET value = value RETURNING value", []byte(rand.Text()+rand.Text())).Scan(&secret)) // 52 bytes, 260 random bits
		})
	}
	if err != nil {
		return nil, s.db.fail(ctx, err)
	} else if len(secret) < pagetoken.MinSecretLen {
		return nil, corrupt("setting page_token_secret: %d bytes, want at least %d", len(secret), pagetoken.MinSecretLen)
	}
	return secret, nil
}
