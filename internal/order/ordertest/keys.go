package ordertest

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
)

// KeyHarness is a key store under test, and Plant, which writes a record into it as another
// writer (or an older orderd) may have: as it is, without Add's checks.
type KeyHarness struct {
	order.KeyStore
	Plant func(tb testing.TB, k order.Key)
}

// NewKeyStore returns an empty key store of its own.
type NewKeyStore func(tb testing.TB) KeyHarness

func newKey(tb testing.TB, name string, p order.Plan, custom order.Limits) (string, order.Key) {
	tb.Helper()
	k, rec, err := order.NewKey(name, p, custom, time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	if err != nil {
		tb.Fatal(err)
	}
	return k, rec
}

// RunKeys runs the conformance suite of order.KeyStore.
func RunKeys(t *testing.T, newStore NewKeyStore) {
	ctx := context.Background()
	add := func(t *testing.T, s order.KeyStore, name string) (string, order.Key) {
		t.Helper()
		k, rec := newKey(t, name, order.Free, order.Limits{})
		if err := s.Add(ctx, rec); err != nil {
			t.Fatal(err)
		}
		return k, rec
	}

	t.Run("AddLookupList", func(t *testing.T) {
		s := newStore(t)
		k1, r1 := newKey(t, "bravo", order.Enterprise, order.Limits{PerMinute: 7, PerDay: 50})
		if err := s.Add(ctx, r1); err != nil {
			t.Fatal(err)
		}
		_, r2 := add(t, s, "alpha")
		got, err := s.Lookup(ctx, order.HashOf(k1))
		if err != nil || got != r1 || got.Limits() != (order.Limits{PerMinute: 7, PerDay: 50}) {
			t.Fatalf("Lookup = %+v, %v; want %+v", got, err, r1)
		}
		if _, err := s.Lookup(ctx, order.HashOf(k1+"x")); !errors.Is(err, order.ErrKeyNotFound) {
			t.Fatalf("Lookup of an unknown key: %v", err)
		}
		list, err := s.List(ctx)
		if err != nil || len(list) != 2 || list[0] != r2 || list[1] != r1 {
			t.Fatalf("List = %+v, %v; want sorted by name", list, err)
		}
	})

	t.Run("NamesAreUnique", func(t *testing.T) {
		s := newStore(t)
		add(t, s, "same")
		_, r2 := newKey(t, "same", order.Pro, order.Limits{})
		if err := s.Add(ctx, r2); !errors.Is(err, order.ErrNameTaken) {
			t.Fatalf("second Add: %v, want ErrNameTaken", err)
		}
		if _, err := s.Lookup(ctx, r2.Hash); !errors.Is(err, order.ErrKeyNotFound) {
			t.Fatal("the refused key was stored")
		}
	})

	t.Run("ConcurrentAddsOfOneName", func(t *testing.T) {
		s := newStore(t)
		var added atomic.Int64
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				_, r := newKey(t, "race", order.Free, order.Limits{})
				if err := s.Add(ctx, r); err == nil {
					added.Add(1)
				} else if !errors.Is(err, order.ErrNameTaken) {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if list, _ := s.List(ctx); added.Load() != 1 || len(list) != 1 {
			t.Fatalf("%d adds succeeded, %d keys listed; want 1", added.Load(), len(list))
		}
	})

	// Among the keys, a record no reader can use (a free key with limits of its own), which
	// is corrupt for List: revoking another key, by name or by prefix, never needs it, so a
	// leaked key is revocable whatever else the store holds.
	t.Run("RevokeByNameOrPrefix", func(t *testing.T) {
		s := newStore(t)
		_, bad := newKey(t, "bad", order.Free, order.Limits{PerMinute: 1, PerDay: 1})
		s.Plant(t, bad)
		k0, r0 := add(t, s, "k0")
		k1, r1 := add(t, s, "k1")
		k2, _ := add(t, s, "k2")
		if got, err := s.Revoke(ctx, "k0"); err != nil || got != r0 {
			t.Fatalf("Revoke by name = %+v, %v", got, err)
		}
		if got, err := s.Revoke(ctx, r1.Prefix); err != nil || got != r1 {
			t.Fatalf("Revoke by prefix = %+v, %v", got, err)
		}
		for _, k := range []string{k0, k1} {
			if _, err := s.Lookup(ctx, order.HashOf(k)); !errors.Is(err, order.ErrKeyNotFound) {
				t.Fatalf("%.10s… still found after Revoke: %v", k, err)
			}
		}
		if _, err := s.Lookup(ctx, order.HashOf(k2)); err != nil {
			t.Fatalf("k2 lost: %v", err)
		}
		if _, err := s.Revoke(ctx, "k0"); !errors.Is(err, order.ErrKeyNotFound) {
			t.Fatalf("second Revoke: %v", err)
		}
		add(t, s, "k0") // the name is free again
	})

	// Add refuses such a name now (NamesThatCannotBeTold), but one stored before may exist.
	t.Run("RevokeTriesTheNameBeforeThePrefix", func(t *testing.T) {
		s := newStore(t)
		_, byPrefix := add(t, s, "first")
		_, byName := newKey(t, byPrefix.Prefix, order.Free, order.Limits{}) // named like the other's prefix
		s.Plant(t, byName)
		if got, err := s.Revoke(ctx, byPrefix.Prefix); err != nil || got != byName {
			t.Fatalf("Revoke = %+v, %v; want the key named so, %+v", got, err, byName)
		}
		if got, err := s.Revoke(ctx, byPrefix.Prefix); err != nil || got != byPrefix {
			t.Fatalf("second Revoke = %+v, %v; want the key with the prefix, %+v", got, err, byPrefix)
		}
	})

	// A name that looks like a key's prefix, would break a row of a listing, or is longer than
	// order.MaxNameLen is refused; a key stored with one before is still listed, found and
	// revocable by its name.
	t.Run("NamesThatCannotBeTold", func(t *testing.T) {
		s := newStore(t)
		_, other := add(t, s, "other")
		var planted []order.Key
		for _, name := range []string{other.Prefix, "osk_x", "two\nlines", "tab\tbed", strings.Repeat("n", order.MaxNameLen+1)} {
			_, r := newKey(t, name, order.Free, order.Limits{})
			if err := s.Add(ctx, r); err == nil {
				t.Fatalf("Add accepted the name %q", name)
			}
			if _, err := s.Lookup(ctx, r.Hash); !errors.Is(err, order.ErrKeyNotFound) {
				t.Fatalf("the key named %q was stored: %v", name, err)
			}
			s.Plant(t, r)
			planted = append(planted, r)
		}
		list, err := s.List(ctx)
		if err != nil || len(list) != len(planted)+1 {
			t.Fatalf("List = %+v, %v; want the %d keys stored before the rules and other", list, err, len(planted))
		}
		for _, r := range planted {
			if got, err := s.Lookup(ctx, r.Hash); err != nil || got != r {
				t.Fatalf("Lookup of the key named %q = %+v, %v", r.Name, got, err)
			}
			if got, err := s.Revoke(ctx, r.Name); err != nil || got != r {
				t.Fatalf("Revoke(%q) = %+v, %v; want %+v", r.Name, got, err, r)
			}
		}
		if list, err := s.List(ctx); err != nil || len(list) != 1 || list[0] != other {
			t.Fatalf("List = %+v, %v; want other alone", list, err)
		}
	})

	// Limits above order.MaxLimit are refused; a key stored with them before is read back as
	// it was stored, its Limits capped.
	t.Run("LimitsAboveTheCap", func(t *testing.T) {
		s := newStore(t)
		_, r := newKey(t, "huge", order.Enterprise, order.Limits{PerMinute: order.MaxLimit + 1, PerDay: math.MaxInt64})
		if err := s.Add(ctx, r); err == nil {
			t.Fatal("Add accepted limits above order.MaxLimit")
		}
		s.Plant(t, r)
		got, err := s.Lookup(ctx, r.Hash)
		if err != nil || got != r || got.Limits() != (order.Limits{PerMinute: order.MaxLimit, PerDay: order.MaxLimit}) {
			t.Fatalf("Lookup = %+v (limits %+v), %v; want %+v, capped", got, got.Limits(), err, r)
		}
		if list, err := s.List(ctx); err != nil || len(list) != 1 || list[0] != r {
			t.Fatalf("List = %+v, %v", list, err)
		}
	})

	t.Run("InvalidRecordsAreRefused", func(t *testing.T) {
		_, r := newKey(t, "", order.Free, order.Limits{})
		if err := newStore(t).Add(ctx, r); err == nil {
			t.Fatal("a key without a name was stored")
		}
	})
}
