// Package authtest is the conformance suite of auth.KeyStore: the key file and Redis run it.
package authtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/plan"
)

// NewStore returns an empty key store of its own.
type NewStore func(tb testing.TB) auth.KeyStore

func newKey(tb testing.TB, name string, p plan.Plan, custom plan.Limits) (string, auth.Key) {
	tb.Helper()
	k, rec, err := auth.NewKey(name, p, custom, time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	if err != nil {
		tb.Fatal(err)
	}
	return k, rec
}

// Run runs the suite.
func Run(t *testing.T, newStore NewStore) {
	ctx := context.Background()

	t.Run("AddLookupList", func(t *testing.T) {
		s := newStore(t)
		k1, r1 := newKey(t, "bravo", plan.Enterprise, plan.Limits{PerMinute: 7, PerDay: 50})
		_, r2 := newKey(t, "alpha", plan.Free, plan.Limits{})
		for _, r := range []auth.Key{r1, r2} {
			if err := s.Add(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Lookup(ctx, auth.HashOf(k1))
		if err != nil || got != r1 || got.Limits() != (plan.Limits{PerMinute: 7, PerDay: 50}) {
			t.Fatalf("Lookup = %+v, %v; want %+v", got, err, r1)
		}
		if _, err := s.Lookup(ctx, auth.HashOf(k1+"x")); !errors.Is(err, auth.ErrKeyNotFound) {
			t.Fatalf("Lookup of an unknown key: %v", err)
		}
		list, err := s.List(ctx)
		if err != nil || len(list) != 2 || list[0] != r2 || list[1] != r1 {
			t.Fatalf("List = %+v, %v; want sorted by name", list, err)
		}
	})

	t.Run("NamesAreUnique", func(t *testing.T) {
		s := newStore(t)
		_, r1 := newKey(t, "same", plan.Free, plan.Limits{})
		_, r2 := newKey(t, "same", plan.Pro, plan.Limits{})
		if err := s.Add(ctx, r1); err != nil {
			t.Fatal(err)
		}
		if err := s.Add(ctx, r2); !errors.Is(err, auth.ErrNameTaken) {
			t.Fatalf("second Add: %v, want ErrNameTaken", err)
		}
		if _, err := s.Lookup(ctx, r2.Hash); !errors.Is(err, auth.ErrKeyNotFound) {
			t.Fatal("the refused key was stored")
		}
	})

	t.Run("ConcurrentAddsOfOneName", func(t *testing.T) {
		s := newStore(t)
		var added atomic.Int64
		var wg sync.WaitGroup
		for range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, r := newKey(t, "race", plan.Free, plan.Limits{})
				if err := s.Add(ctx, r); err == nil {
					added.Add(1)
				} else if !errors.Is(err, auth.ErrNameTaken) {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if list, _ := s.List(ctx); added.Load() != 1 || len(list) != 1 {
			t.Fatalf("%d adds succeeded, %d keys listed; want 1", added.Load(), len(list))
		}
	})

	t.Run("RevokeByNameOrPrefix", func(t *testing.T) {
		s := newStore(t)
		keys := map[string]string{}
		recs := map[string]auth.Key{}
		for i := range 3 {
			name := fmt.Sprintf("k%d", i)
			keys[name], recs[name] = newKey(t, name, plan.Pro, plan.Limits{})
			if err := s.Add(ctx, recs[name]); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := s.Revoke(ctx, "k0"); err != nil || got != recs["k0"] {
			t.Fatalf("Revoke by name = %+v, %v", got, err)
		}
		if got, err := s.Revoke(ctx, recs["k1"].Prefix); err != nil || got != recs["k1"] {
			t.Fatalf("Revoke by prefix = %+v, %v", got, err)
		}
		for _, name := range []string{"k0", "k1"} {
			if _, err := s.Lookup(ctx, auth.HashOf(keys[name])); !errors.Is(err, auth.ErrKeyNotFound) {
				t.Fatalf("%s still found after Revoke: %v", name, err)
			}
		}
		if _, err := s.Lookup(ctx, auth.HashOf(keys["k2"])); err != nil {
			t.Fatalf("k2 lost: %v", err)
		}
		if _, err := s.Revoke(ctx, "k0"); !errors.Is(err, auth.ErrKeyNotFound) {
			t.Fatalf("second Revoke: %v", err)
		}
		// The name is free again.
		_, again := newKey(t, "k0", plan.Free, plan.Limits{})
		if err := s.Add(ctx, again); err != nil {
			t.Fatalf("re-adding a revoked name: %v", err)
		}
	})

	t.Run("RevokeTriesTheNameBeforeThePrefix", func(t *testing.T) {
		s := newStore(t)
		_, byPrefix := newKey(t, "first", plan.Free, plan.Limits{})
		_, byName := newKey(t, byPrefix.Prefix, plan.Free, plan.Limits{}) // named like the other's prefix
		for _, r := range []auth.Key{byPrefix, byName} {
			if err := s.Add(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := s.Revoke(ctx, byPrefix.Prefix); err != nil || got != byName {
			t.Fatalf("Revoke = %+v, %v; want the key named so, %+v", got, err, byName)
		}
		if got, err := s.Revoke(ctx, byPrefix.Prefix); err != nil || got != byPrefix {
			t.Fatalf("second Revoke = %+v, %v; want the key with the prefix, %+v", got, err, byPrefix)
		}
	})

	t.Run("InvalidRecordsAreRefused", func(t *testing.T) {
		s := newStore(t)
		_, r := newKey(t, "", plan.Free, plan.Limits{})
		if err := s.Add(ctx, r); err == nil {
			t.Fatal("a key without a name was stored")
		}
	})
}
