package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/petstore/orderd/internal/order"
)

var _ order.KeyStore = (*Keys)(nil)

// Keys is an order.KeyStore in the api_keys table; other processes' changes count from the next request.
type Keys struct{ db *DB }

// NewKeys returns the key store of db.
func NewKeys(db *DB) *Keys { return &Keys{db: db} }

// Lookup returns the key with hash h.
func (s *Keys) Lookup(ctx context.Context, h order.Hash) (order.Key, error) {
	return cachedRead(ctx, s.db, &s.db.cache.keys, "api_keys", h, func(readCtx context.Context) (order.Key, error) {
		k, err := scanKey(s.db.stmts.lookupKey.QueryRowContext(readCtx, string(h)))
		if errors.Is(err, sql.ErrNoRows) {
			return order.Key{}, order.ErrKeyNotFound
		}
		return k, s.db.fail(ctx, err)
	})
}

// Add stores k if no key has its name, in one statement: atomic for every process.
func (s *Keys) Add(ctx context.Context, k order.Key) error {
	if err := k.Validate(); err != nil {
		return err
	}
	createdAt := k.CreatedAt.UTC()
	if y := createdAt.Year(); y < 0 || y > 9999 { // timestampLayout needs four digits
		return fmt.Errorf("key %q: createdAt: time %s is outside the years 0000 to 9999", k.Name, createdAt.Format(time.RFC3339Nano))
	}
	tx, done, err := s.db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer done()
	err = tx.QueryRowContext(ctx,
		"INSERT INTO api_keys ("+keyColumns+") VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING RETURNING name",
		k.Name, string(k.Plan), k.Custom.PerMinute, k.Custom.PerDay, k.Prefix, string(k.Hash), createdAt.Format(timestampLayout)).Scan(new(string))
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %q", order.ErrNameTaken, k.Name)
	}
	if err != nil {
		return s.db.fail(ctx, err)
	}
	return s.db.fail(ctx, s.db.commit(tx))
}

// List returns every key, sorted by name.
func (s *Keys) List(ctx context.Context) ([]order.Key, error) {
	rows, err := s.db.sql.QueryContext(ctx, "SELECT "+keyColumns+" FROM api_keys ORDER BY name")
	keys, err := scanRows(rows, err, scanKey)
	return keys, s.db.fail(ctx, err)
}

// Revoke removes the key named nameOrPrefix, else the first by name with that prefix: names,
// which an operator chose, first.
func (s *Keys) Revoke(ctx context.Context, nameOrPrefix string) (order.Key, error) {
	tx, done, err := s.db.beginWrite(ctx)
	if err != nil {
		return order.Key{}, err
	}
	defer done()
	const q = "DELETE FROM api_keys WHERE name = coalesce((SELECT name FROM api_keys WHERE name = ?1), " +
		"(SELECT name FROM api_keys WHERE ?2 AND prefix = ?1 ORDER BY name LIMIT 1)) RETURNING " + keyColumns
	k, err := scanKey(tx.QueryRowContext(ctx, q, nameOrPrefix, order.LooksLikePrefix(nameOrPrefix)))
	if errors.Is(err, sql.ErrNoRows) {
		return order.Key{}, fmt.Errorf("%w: %q", order.ErrKeyNotFound, nameOrPrefix)
	}
	if err != nil {
		return order.Key{}, s.db.fail(ctx, err)
	}
	return k, s.db.fail(ctx, s.db.commit(tx))
}

// scanKey reads the keyColumns of a row; one the service cannot use is ErrCorrupt, named.
func scanKey(row scanner) (order.Key, error) {
	var (
		k                         order.Key
		planName, hash, createdAt string
	)
	if err := row.Scan(&k.Name, &planName, &k.Custom.PerMinute, &k.Custom.PerDay, &k.Prefix, &hash, &createdAt); err != nil {
		return order.Key{}, err
	}
	k.Plan, k.Hash = order.Plan(planName), order.Hash(hash)
	var err error
	if k.CreatedAt, err = time.Parse(timestampLayout, createdAt); err != nil {
		return order.Key{}, corrupt("key %q: createdAt %q: %w", k.Name, createdAt, err)
	}
	if err := k.ValidateStored(); err != nil { // a name from before CheckName's rules still reads
		return order.Key{}, corrupt("%w", err)
	}
	return k, nil
}
