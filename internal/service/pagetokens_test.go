package service

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/pagetoken"
	"github.com/petstore/orderd/internal/redistest"
)

// TestPageTokens: with the setting, every instance given the same secret reads the others'
// tokens and one given another secret refuses them; without it, every instance on the same
// stores reads the others' tokens, in both modes.
func TestPageTokens(t *testing.T) {
	ctx := context.Background()
	f := order.Filter{Statuses: []order.Status{order.StatusPending}}
	// crossRead makes a token with a and reads it with b.
	crossRead := func(t *testing.T, a, b *pagetoken.Codec) (int64, error) {
		t.Helper()
		tok, err := a.Make(ctx, f, 41)
		if err != nil {
			t.Fatal(err)
		}
		return b.Read(ctx, tok, f)
	}
	codec := func(t *testing.T, secret string, s *Stores) *pagetoken.Codec { return pagetoken.For(secret, s.Secrets) }
	open := func(t *testing.T, cfg StoreConfig) *Stores {
		t.Helper()
		s, err := OpenStores(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	db := StoreConfig{DB: filepath.Join(t.TempDir(), "orderd.db"), CreateDB: true}

	t.Run("Setting", func(t *testing.T) {
		one, other := strings.Repeat("s", 32), strings.Repeat("t", 32)
		a, b := codec(t, one, open(t, db)), codec(t, one, open(t, db))
		if after, err := crossRead(t, a, b); err != nil || after != 41 {
			t.Fatalf("same setting: %d, %v", after, err)
		}
		// The setting wins over the store's secret: a codec of the store refuses it.
		for name, c := range map[string]*pagetoken.Codec{"another setting": codec(t, other, open(t, db)), "the store's": codec(t, "", open(t, db))} {
			if _, err := crossRead(t, a, c); !errors.Is(err, pagetoken.ErrAltered) {
				t.Fatalf("a token read under %s secret: %v, want %v", name, err, pagetoken.ErrAltered)
			}
		}
	})

	srv := redistest.Start(t)
	for mode, cfg := range map[string]StoreConfig{
		"Embedded": db,
		"Redis":    {RedisURL: srv.URL(), RedisPrefix: redistest.Prefix(t)},
	} {
		t.Run("StoreSecret"+mode, func(t *testing.T) {
			// Two instances on the same stores, neither told a secret.
			a, b := codec(t, "", open(t, cfg)), codec(t, "", open(t, cfg))
			if after, err := crossRead(t, a, b); err != nil || after != 41 {
				t.Fatalf("%d, %v", after, err)
			}
		})
	}
}
