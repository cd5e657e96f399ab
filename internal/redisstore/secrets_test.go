package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/pagetoken"
	"github.com/petstore/orderd/internal/pagetoken/pagetokentest"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
	"github.com/petstore/orderd/internal/store"
)

func newSecrets(tb testing.TB, srv *redistest.Server, prefix string) *redisstore.Secrets {
	tb.Helper()
	s, err := redisstore.NewSecrets(client(tb, srv), prefix, time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// TestSecretsConformance: each handle has a client (a connection pool) of its own, as each
// instance would.
func TestSecretsConformance(t *testing.T) {
	srv := redistest.Start(t)
	pagetokentest.RunSecretStore(t, func(tb testing.TB) func() pagetoken.SecretStore {
		prefix := redistest.Prefix(tb)
		return func() pagetoken.SecretStore { return newSecrets(tb, srv, prefix) }
	})
}

// TestSecretKey: the secret is the key docs/redis-layout.md names, a string of 32 bytes;
// a Redis that lost it makes a new one; a value this service cannot use is corrupt.
func TestSecretKey(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	prefix := redistest.Prefix(t)
	key := "{" + prefix + ":settings}:page-token-secret"
	s := newSecrets(t, srv, prefix)
	made, err := s.PageTokenSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if typ := srv.MustDo(t, "TYPE", key); typ != "string" {
		t.Fatalf("TYPE %s = %q, want string", key, typ)
	}
	if n := srv.MustDo(t, "STRLEN", key); n != "32" {
		t.Fatalf("STRLEN %s = %s, want 32", key, n)
	}

	srv.MustDo(t, "DEL", key)
	again, err := s.PageTokenSecret(ctx)
	if err != nil || len(again) != 32 || bytes.Equal(again, made) {
		t.Fatalf("after the key was lost: %x, %v; want a new secret (the lost one was %x)", again, err, made)
	}

	srv.MustDo(t, "SET", key, "short")
	if _, err := s.PageTokenSecret(ctx); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("a 5-byte secret: %v, want store.ErrCorrupt", err)
	}
	srv.MustDo(t, "DEL", key)
	srv.MustDo(t, "HSET", key, "f", "v")
	if _, err := s.PageTokenSecret(ctx); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("a hash at the secret's key: %v, want store.ErrCorrupt", err)
	}
}
