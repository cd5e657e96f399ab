package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/pagetoken"
	"github.com/petstore/orderd/internal/pagetoken/pagetokentest"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
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
	if _, err := s.PageTokenSecret(ctx); !errors.Is(err, order.ErrCorrupt) {
		t.Fatalf("a 5-byte secret: %v, want order.ErrCorrupt", err)
	}
	srv.MustDo(t, "DEL", key)
	srv.MustDo(t, "HSET", key, "f", "v")
	if _, err := s.PageTokenSecret(ctx); !errors.Is(err, order.ErrCorrupt) {
		t.Fatalf("a hash at the secret's key: %v, want order.ErrCorrupt", err)
	}
}

// TestForgedTokensCostNoRead: 1,000 forged tokens against a codec on Redis make at most a
// few GETs of the secret (INFO commandstats counts them); a secret made by another instance
// after the key was lost is still followed within a second.
func TestForgedTokensCostNoRead(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	prefix := redistest.Prefix(t)
	c := pagetoken.FromStore(newSecrets(t, srv, prefix))
	f := order.Filter{PetID: new(int64(7))}
	tok, err := c.Make(ctx, f, 5)
	if err != nil {
		t.Fatal(err)
	}
	bad := pagetokentest.Forged(t, tok)
	gets := getCalls(t, srv)
	start := time.Now()
	for range 1000 {
		if _, err := c.Read(ctx, bad, f); !errors.Is(err, pagetoken.ErrAltered) {
			t.Fatalf("a forged token: %v, want %v", err, pagetoken.ErrAltered)
		}
	}
	if n, most := getCalls(t, srv)-gets, 1+int(time.Since(start)/time.Second); n > most {
		t.Fatalf("1000 forged tokens in %v: %d GETs, want at most %d", time.Since(start), n, most)
	}

	// The key is lost; another instance makes a new secret and a token under it.
	srv.MustDo(t, "DEL", "{"+prefix+":settings}:page-token-secret")
	fresh, err := pagetoken.FromStore(newSecrets(t, srv, prefix)).Make(ctx, f, 6)
	if err != nil {
		t.Fatal(err)
	}
	pagetokentest.AwaitNewSecret(t, c, fresh, f, 6)
}

// getCalls is how many GETs srv has answered (INFO commandstats).
func getCalls(tb testing.TB, srv *redistest.Server) int {
	tb.Helper()
	info := srv.MustDo(tb, "INFO", "commandstats")
	for _, line := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_get:calls="); ok {
			n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			return n
		}
	}
	return 0
}
