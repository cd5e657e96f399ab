package pagetoken_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/pagetoken"
)

var secret = bytes.Repeat([]byte("k"), pagetoken.MinSecretLen)

func codec(t *testing.T) *pagetoken.Codec {
	t.Helper()
	c, err := pagetoken.New(secret)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ptr[T any](v T) *T { return &v }

func TestRoundTrip(t *testing.T) {
	c, ctx := codec(t), context.Background()
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	filters := []order.Filter{
		{},
		{Statuses: []order.Status{order.StatusPending}},
		{Statuses: []order.Status{order.StatusShipped, order.StatusPending}, PetID: ptr(int64(7))},
		{ShipFrom: &day, ShipBefore: ptr(day.Add(24 * time.Hour))},
		{ShipFrom: ptr(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)), ShipBefore: ptr(time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC))},
	}
	for _, f := range filters {
		for _, after := range []int64{0, 1, 41, math.MaxInt64 - 1, math.MaxInt64} {
			tok, err := c.Make(ctx, f, after)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Read(ctx, tok, f)
			if err != nil || got != after {
				t.Fatalf("%+v after %d: Read(%q) = %d, %v", f, after, tok, got, err)
			}
		}
	}
}

// TestSameFilterInAnotherForm: states in another order or repeated, and the same instants
// in another zone, are the same filter.
func TestSameFilterInAnotherForm(t *testing.T) {
	c, ctx := codec(t), context.Background()
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	made := order.Filter{Statuses: []order.Status{order.StatusShipped, order.StatusPending}, ShipFrom: &day}
	tok, err := c.Make(ctx, made, 9)
	if err != nil {
		t.Fatal(err)
	}
	paris := day.In(time.FixedZone("CET", 3600))
	read := order.Filter{Statuses: []order.Status{order.StatusPending, order.StatusShipped, order.StatusPending}, ShipFrom: &paris}
	if got, err := c.Read(ctx, tok, read); err != nil || got != 9 {
		t.Fatalf("Read = %d, %v", got, err)
	}
}

func TestRefused(t *testing.T) {
	c, ctx := codec(t), context.Background()
	f := order.Filter{Statuses: []order.Status{order.StatusPending}}
	tok, err := c.Make(ctx, f, 1234)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(tok)
	flip := func(i int) string {
		b := bytes.Clone(raw)
		b[i] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	other, err := pagetoken.New(bytes.Repeat([]byte("o"), pagetoken.MinSecretLen))
	if err != nil {
		t.Fatal(err)
	}
	foreign, _ := other.Make(ctx, f, 1234)
	cases := []struct {
		name, token string
		filter      order.Filter
		want        error
	}{
		{"not base64url", tok[:10] + "+" + tok[11:], f, pagetoken.ErrMalformed},
		{"padded", tok + "=", f, pagetoken.ErrMalformed},
		{"truncated", tok[:len(tok)-2], f, pagetoken.ErrMalformed},
		{"one byte longer", base64.RawURLEncoding.EncodeToString(append(bytes.Clone(raw), 0)), f, pagetoken.ErrMalformed},
		{"empty", "", f, pagetoken.ErrMalformed},
		{"id flipped", flip(8), f, pagetoken.ErrAltered},
		{"digest flipped", flip(12), f, pagetoken.ErrAltered},
		{"MAC flipped", flip(len(raw) - 1), f, pagetoken.ErrAltered},
		{"format flipped", flip(0), f, pagetoken.ErrAltered},
		{"another secret", foreign, f, pagetoken.ErrAltered},
		{"other states", tok, order.Filter{Statuses: []order.Status{order.StatusShipped}}, pagetoken.ErrOtherFilter},
		{"no filter", tok, order.Filter{}, pagetoken.ErrOtherFilter},
		{"a pet more", tok, order.Filter{Statuses: f.Statuses, PetID: ptr(int64(0))}, pagetoken.ErrOtherFilter},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Read(ctx, tc.token, tc.filter)
			if !errors.Is(err, pagetoken.ErrInvalid) || !errors.Is(err, tc.want) {
				t.Fatalf("Read = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestOtherVersion: a token that the service made, but for another version of the API, is
// told apart from an altered one. The test makes one with a codec of the same secret whose
// tokens it rewrites, since only the service can make a token that verifies.
func TestOtherVersion(t *testing.T) {
	ctx := context.Background()
	tok := pagetoken.MakeWithFormat(secret, pagetoken.Format+1, order.Filter{}, 5)
	if _, err := codec(t).Read(ctx, tok, order.Filter{}); !errors.Is(err, pagetoken.ErrOtherVersion) {
		t.Fatalf("Read = %v, want %v", err, pagetoken.ErrOtherVersion)
	}
}

func TestShortSecret(t *testing.T) {
	if _, err := pagetoken.New(make([]byte, pagetoken.MinSecretLen-1)); err == nil {
		t.Fatal("a 31-byte secret was taken")
	}
}

// memSecrets is a SecretStore in memory whose secret the test can replace, as a Redis that
// lost its data makes a new one.
type memSecrets struct {
	secret atomic.Pointer[[]byte]
	reads  atomic.Int32
}

func (m *memSecrets) PageTokenSecret(context.Context) ([]byte, error) {
	m.reads.Add(1)
	return *m.secret.Load(), nil
}

// TestStoreSecretFollowed: a codec reads the store's secret once, and again when a token
// does not verify, so that an instance accepts the tokens of another instance that met a new
// secret first; a token that verifies under neither is still refused.
func TestStoreSecretFollowed(t *testing.T) {
	ctx := context.Background()
	store := &memSecrets{}
	first, second := bytes.Repeat([]byte("1"), 32), bytes.Repeat([]byte("2"), 32)
	store.secret.Store(&first)
	a, b := pagetoken.FromStore(store), pagetoken.FromStore(store)
	tok, err := a.Make(ctx, order.Filter{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Read(ctx, tok, order.Filter{}); err != nil || got != 3 {
		t.Fatalf("b.Read = %d, %v", got, err)
	}
	if n := store.reads.Load(); n != 2 {
		t.Fatalf("%d reads of the store, want one per codec", n)
	}
	store.secret.Store(&second)
	// b still knows the first secret; a token made under the second is read after one more
	// read of the store.
	fresh := pagetoken.FromStore(store)
	tok2, _ := fresh.Make(ctx, order.Filter{}, 4)
	if got, err := b.Read(ctx, tok2, order.Filter{}); err != nil || got != 4 {
		t.Fatalf("b.Read after the store's secret changed = %d, %v", got, err)
	}
	if _, err := b.Read(ctx, tok, order.Filter{}); !errors.Is(err, pagetoken.ErrAltered) {
		t.Fatalf("a token of the lost secret: %v, want %v", err, pagetoken.ErrAltered)
	}
}

// FuzzRead: Read never panics, and any token it accepts is the very token Make makes for the
// id it returns and the filter it was read with.
func FuzzRead(f *testing.F) {
	c, err := pagetoken.New(secret)
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	filters := []order.Filter{{}, {Statuses: []order.Status{order.StatusPending}, PetID: ptr(int64(7)), ShipFrom: &day}}
	for i, fl := range filters {
		tok, err := c.Make(ctx, fl, int64(i*41))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(tok, uint8(i))
		f.Add(tok[:len(tok)-1], uint8(i))
		f.Add(tok, uint8(1-i))
	}
	f.Add("", uint8(0))
	f.Add("====", uint8(1))
	f.Fuzz(func(t *testing.T, token string, which uint8) {
		fl := filters[int(which)%len(filters)]
		after, err := c.Read(ctx, token, fl)
		if err != nil {
			if !errors.Is(err, pagetoken.ErrInvalid) {
				t.Fatalf("Read(%q) = %v, not ErrInvalid (a fixed secret has no store to fail)", token, err)
			}
			return
		}
		made, err := c.Make(ctx, fl, after)
		if err != nil || made != token {
			t.Fatalf("Read accepted %q as after %d, but Make makes %q (%v)", token, after, made, err)
		}
	})
}
