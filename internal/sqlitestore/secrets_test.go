package sqlitestore_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/pagetoken"
	"github.com/petstore/orderd/internal/pagetoken/pagetokentest"
	"github.com/petstore/orderd/internal/sqlitestore"
	"github.com/petstore/orderd/internal/sqlitestore/sqlitetest"
)

// TestSecretsConformance: each handle is a *DB of its own on one file, as each process
// would open it.
func TestSecretsConformance(t *testing.T) {
	pagetokentest.RunSecretStore(t, func(tb testing.TB) func() pagetoken.SecretStore {
		path := filepath.Join(tb.TempDir(), "orderd.db")
		return func() pagetoken.SecretStore { return sqlitestore.NewSecrets(mustOpen(tb, path)) }
	})
}

// TestSecretsConformanceOnOneDB: the handles share one *DB, as the stores of one process do.
func TestSecretsConformanceOnOneDB(t *testing.T) {
	pagetokentest.RunSecretStore(t, func(tb testing.TB) func() pagetoken.SecretStore {
		db := mustOpen(tb, filepath.Join(tb.TempDir(), "orderd.db"))
		return func() pagetoken.SecretStore { return sqlitestore.NewSecrets(db) }
	})
}

// TestSecretIsInTheFile: the secret outlives the process that made it, in a file only its
// owner reads; a secret too short to use is reported as corrupt, not used.
func TestSecretIsInTheFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "orderd.db")
	db, err := sqlitestore.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	made, err := sqlitestore.NewSecrets(db).PageTokenSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the file holding the secret: %v, %v; want mode 0600", info.Mode(), err)
	}
	reopened := mustOpen(t, path)
	if got, err := sqlitestore.NewSecrets(reopened).PageTokenSecret(ctx); err != nil || !bytes.Equal(got, made) {
		t.Fatalf("after reopening: %x, %v; made %x", got, err, made)
	}

	// Another writer, as a person with the sqlite3 shell would be.
	shell, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer shell.Close()
	if _, err := shell.Exec("UPDATE settings SET value = x'0102' WHERE name = 'page_token_secret'"); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlitestore.NewSecrets(reopened).PageTokenSecret(ctx); !errors.Is(err, order.ErrCorrupt) {
		t.Fatalf("a 2-byte secret in the file: %v, want order.ErrCorrupt", err)
	}
}

// TestNewSecretFollowed: a secret made by another process after the row was deleted (as the
// README's rotation does) is followed within a second by a codec that read the old one,
// forged tokens meanwhile or not; a token of the old secret is then refused.
func TestNewSecretFollowed(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "orderd.db")
	c := pagetoken.FromStore(sqlitestore.NewSecrets(mustOpen(t, path)))
	f := order.Filter{Statuses: []order.Status{order.StatusShipped}}
	old, err := c.Make(ctx, f, 5)
	if err != nil {
		t.Fatal(err)
	}
	sqlitetest.DeleteSecret(t, path)
	fresh, err := pagetoken.FromStore(sqlitestore.NewSecrets(mustOpen(t, path))).Make(ctx, f, 6)
	if err != nil {
		t.Fatal(err)
	}
	pagetokentest.AwaitNewSecret(t, c, fresh, f, 6)
	if _, err := c.Read(ctx, old, f); !errors.Is(err, pagetoken.ErrAltered) {
		t.Fatalf("a token of the deleted secret: %v, want %v", err, pagetoken.ErrAltered)
	}
}
