// Package pagetokentest is the conformance suite of pagetoken.SecretStore, run through
// several handles on one store, as several processes would hold them.
package pagetokentest

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/pagetoken"
)

// NewStore makes a store of its own, holding no secret yet, and returns open: each call of
// open returns a new handle on that one store, as another process would hold it.
type NewStore func(tb testing.TB) (open func() pagetoken.SecretStore)

// RunSecretStore runs the suite.
func RunSecretStore(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	secretOf := func(tb testing.TB, s pagetoken.SecretStore) []byte {
		tb.Helper()
		secret, err := s.PageTokenSecret(ctx)
		if err != nil {
			tb.Fatalf("PageTokenSecret: %v", err)
		}
		return secret
	}

	t.Run("MadeOnFirstCall", func(t *testing.T) {
		secret := secretOf(t, newStore(t)())
		if len(secret) < pagetoken.MinSecretLen {
			t.Fatalf("a secret of %d bytes, want at least %d", len(secret), pagetoken.MinSecretLen)
		}
	})

	t.Run("SameOnEveryCall", func(t *testing.T) {
		s := newStore(t)()
		first := bytes.Clone(secretOf(t, s))
		for range 5 {
			if got := secretOf(t, s); !bytes.Equal(got, first) {
				t.Fatalf("a later call returned %x, the first %x", got, first)
			}
		}
	})

	t.Run("SameThroughEveryHandle", func(t *testing.T) {
		open := newStore(t)
		first := secretOf(t, open())
		// A handle opened before the secret was made and one opened after: both read it.
		for i := range 3 {
			if got := secretOf(t, open()); !bytes.Equal(got, first) {
				t.Fatalf("handle %d read %x; the first handle made %x", i+1, got, first)
			}
		}
	})

	t.Run("ConcurrentFirstCallsAgree", func(t *testing.T) {
		const racers, handles = 32, 4
		open := newStore(t)
		hs := make([]pagetoken.SecretStore, handles)
		for i := range hs {
			hs[i] = open()
		}
		secrets := make([][]byte, racers)
		errs := make([]error, racers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() {
				<-start // every caller asks at once, none first
				secrets[i], errs[i] = hs[i%handles].PageTokenSecret(ctx)
			})
		}
		close(start)
		wg.Wait()
		for i := range racers {
			if errs[i] != nil {
				t.Fatalf("caller %d: %v", i, errs[i])
			}
			if !bytes.Equal(secrets[i], secrets[0]) {
				t.Fatalf("caller %d got %x, caller 0 %x: a race made two secrets", i, secrets[i], secrets[0])
			}
		}
		if got := secretOf(t, open()); !bytes.Equal(got, secrets[0]) {
			t.Fatalf("a handle opened after the race read %x, the racers %x", got, secrets[0])
		}
	})

	t.Run("RandomPerStore", func(t *testing.T) {
		a, b := secretOf(t, newStore(t)()), secretOf(t, newStore(t)())
		if bytes.Equal(a, b) {
			t.Fatalf("two stores made the same secret %x", a)
		}
	})

	t.Run("TokensCrossHandles", func(t *testing.T) {
		open := newStore(t)
		f := order.Filter{Statuses: []order.Status{order.StatusPending}}
		tok, err := pagetoken.FromStore(open()).Make(ctx, f, 42)
		if err != nil {
			t.Fatal(err)
		}
		if after, err := pagetoken.FromStore(open()).Read(ctx, tok, f); err != nil || after != 42 {
			t.Fatalf("another handle's codec read %d, %v; want 42", after, err)
		}
	})

	t.Run("ForgedTokensReadRarely", func(t *testing.T) {
		s := &counting{SecretStore: newStore(t)()}
		c := pagetoken.FromStore(s)
		f := order.Filter{Statuses: []order.Status{order.StatusPending}}
		tok, err := c.Make(ctx, f, 42)
		if err != nil {
			t.Fatal(err)
		}
		bad := Forged(t, tok)
		start := time.Now()
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 125 {
					if _, err := c.Read(ctx, bad, f); !errors.Is(err, pagetoken.ErrAltered) {
						t.Errorf("a forged token: %v, want %v", err, pagetoken.ErrAltered)
						return
					}
				}
			})
		}
		wg.Wait()
		// The first read, and one per second begun since.
		if n, most := s.reads.Load(), 2+int64(time.Since(start)/time.Second); n > most {
			t.Fatalf("1000 forged tokens in %v: %d reads of the store, want at most %d", time.Since(start), n, most)
		}
	})
}

// counting is a SecretStore that counts its reads.
type counting struct {
	pagetoken.SecretStore
	reads atomic.Int64
}

func (c *counting) PageTokenSecret(ctx context.Context) ([]byte, error) {
	c.reads.Add(1)
	return c.SecretStore.PageTokenSecret(ctx)
}

// Forged is tok with one bit of its MAC changed: of the right form, never made.
func Forged(tb testing.TB, tok string) string {
	tb.Helper()
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		tb.Fatalf("token %q: %v", tok, err)
	}
	b[len(b)-1] ^= 1
	return base64.RawURLEncoding.EncodeToString(b)
}

// AwaitNewSecret reads fresh (after, for f, under the store's new secret) with c until c
// follows it, within RereadEvery; meanwhile a forged fresh must be refused as altered.
func AwaitNewSecret(tb testing.TB, c *pagetoken.Codec, fresh string, f order.Filter, after int64) {
	tb.Helper()
	ctx := context.Background()
	made := time.Now()
	for {
		got, err := c.Read(ctx, fresh, f)
		if err == nil && got == after {
			return
		}
		if !errors.Is(err, pagetoken.ErrAltered) || time.Since(made) > pagetoken.RereadEvery+200*time.Millisecond {
			tb.Fatalf("%v after the new secret was made: %d, %v; want it followed within a second", time.Since(made), got, err)
		}
		if _, err := c.Read(ctx, Forged(tb, fresh), f); !errors.Is(err, pagetoken.ErrAltered) {
			tb.Fatalf("a forged token: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
