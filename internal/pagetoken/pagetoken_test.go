package pagetoken_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/pagetoken"
	"github.com/petstore/orderd/internal/pagetoken/pagetokentest"
)

var secret = bytes.Repeat([]byte("k"), pagetoken.MinSecretLen)

func codec(t *testing.T) *pagetoken.Codec {
	t.Helper()
	return pagetoken.For(string(secret), nil)
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
	other := pagetoken.For(strings.Repeat("o", pagetoken.MinSecretLen), nil)
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

// memSecrets is a SecretStore in memory whose secret the test can replace, as a Redis that
// lost its data makes a new one. When gate is set, each read waits for it to be closed.
type memSecrets struct {
	secret atomic.Pointer[[]byte]
	reads  atomic.Int32
	gate   chan struct{}
	// reading, when set, is told of each read as it begins (non-blocking: a buffer of one).
	reading chan struct{}
}

func (m *memSecrets) PageTokenSecret(context.Context) ([]byte, error) {
	m.reads.Add(1)
	if m.reading != nil {
		select {
		case m.reading <- struct{}{}:
		default:
		}
	}
	if m.gate != nil {
		<-m.gate
	}
	return *m.secret.Load(), nil
}

func newMemSecrets(secret []byte) *memSecrets {
	m := &memSecrets{}
	m.secret.Store(&secret)
	return m
}

// clock is a time the test moves; every codec of a test reads it.
type clock struct{ now atomic.Pointer[time.Time] }

func newClock() *clock {
	c := &clock{}
	c.set(time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC))
	return c
}

func (c *clock) Now() time.Time          { return *c.now.Load() }
func (c *clock) set(t time.Time)         { c.now.Store(&t) }
func (c *clock) advance(d time.Duration) { c.set(c.Now().Add(d)) }

func (c *clock) codec(store pagetoken.SecretStore) *pagetoken.Codec {
	codec := pagetoken.FromStore(store)
	pagetoken.SetClock(codec, c.Now)
	return codec
}

// TestStoreSecretFollowed: a codec reads the store's secret once, and again when a token
// does not verify, so that an instance accepts the tokens of another instance that met a new
// secret first, once a second has passed since its last read; a token that verifies under
// neither is still refused.
func TestStoreSecretFollowed(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	store := newMemSecrets(bytes.Repeat([]byte("1"), 32))
	a, b := clk.codec(store), clk.codec(store)
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
	second := bytes.Repeat([]byte("2"), 32)
	store.secret.Store(&second)
	tok2, _ := clk.codec(store).Make(ctx, order.Filter{}, 4) // another instance, on the new secret
	// b read the store less than a second ago: it does not read it again yet.
	if _, err := b.Read(ctx, tok2, order.Filter{}); !errors.Is(err, pagetoken.ErrAltered) {
		t.Fatalf("b.Read within a second of its read: %v, want %v", err, pagetoken.ErrAltered)
	}
	if n := store.reads.Load(); n != 3 {
		t.Fatalf("%d reads of the store, want 3: b read it again within a second", n)
	}
	clk.advance(pagetoken.RereadEvery)
	if got, err := b.Read(ctx, tok2, order.Filter{}); err != nil || got != 4 {
		t.Fatalf("b.Read a second after the store's secret changed = %d, %v", got, err)
	}
	if n := store.reads.Load(); n != 4 {
		t.Fatalf("%d reads of the store, want 4", n)
	}
	// b now makes its tokens under the new secret too.
	if tok3, _ := b.Make(ctx, order.Filter{}, 4); tok3 != tok2 {
		t.Fatalf("b makes %s, the new secret's token is %s", tok3, tok2)
	}
	if _, err := b.Read(ctx, tok, order.Filter{}); !errors.Is(err, pagetoken.ErrAltered) {
		t.Fatalf("a token of the lost secret: %v, want %v", err, pagetoken.ErrAltered)
	}
}

// TestForgedTokensReadTheStoreOncePerSecond: however many tokens fail to verify, at once or
// one after another, the codec reads the store at most once per second for them.
func TestForgedTokensReadTheStoreOncePerSecond(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	store := newMemSecrets(secret)
	c := clk.codec(store)
	tok, err := c.Make(ctx, order.Filter{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	bad := pagetokentest.Forged(t, tok)
	readAll := func() {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 125 {
					if _, err := c.Read(ctx, bad, order.Filter{}); !errors.Is(err, pagetoken.ErrAltered) {
						t.Errorf("Read = %v, want %v", err, pagetoken.ErrAltered)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	readAll()
	if n := store.reads.Load(); n != 1 {
		t.Fatalf("1000 forged tokens within the first read's second: %d reads of the store, want the first only", n)
	}
	for second := range 3 {
		clk.advance(pagetoken.RereadEvery)
		readAll()
		if n, want := store.reads.Load(), int32(second+2); n != want {
			t.Fatalf("1000 forged tokens in second %d: %d reads of the store in all, want %d", second+1, n, want)
		}
	}
}

// TestFirstReadShared: callers that need the secret while the store is being read wait for
// that read instead of making their own, and a caller that gives up does not end the read
// for the others.
func TestFirstReadShared(t *testing.T) {
	store := newMemSecrets(secret)
	store.gate = make(chan struct{})
	store.reading = make(chan struct{}, 1)
	c := newClock().codec(store)
	first, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	wg.Go(func() {
		_, err := c.Make(first, order.Filter{}, 1)
		errs <- err
	})
	<-store.reading // the first caller is reading the store
	var started sync.WaitGroup
	for range 19 {
		started.Add(1)
		wg.Go(func() {
			started.Done()
			_, err := c.Make(context.Background(), order.Filter{}, 1)
			errs <- err
		})
	}
	cancel()
	// The gate opens once every other caller has started: those that reach the codec while
	// the first read runs must wait on it, and one that comes after finds the secret; either
	// way none reads the store again, so the count below holds whatever the scheduling.
	started.Wait()
	close(store.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Make: %v", err)
		}
	}
	if n := store.reads.Load(); n != 1 {
		t.Fatalf("%d reads of the store for 20 callers at once, want 1", n)
	}
}

// failingSecrets is a store that cannot be reached.
type failingSecrets struct{ reads atomic.Int32 }

var errOut = errors.New("store out")

func (f *failingSecrets) PageTokenSecret(context.Context) ([]byte, error) {
	f.reads.Add(1)
	return nil, errOut
}

// TestStoreFailure: a store that fails is the store's error, not a refused token, and the
// next caller reads it again: without a secret there is nothing to answer with.
func TestStoreFailure(t *testing.T) {
	ctx := context.Background()
	store := &failingSecrets{}
	c := newClock().codec(store)
	for i := range 3 {
		if _, err := c.Read(ctx, strings.Repeat("A", 55), order.Filter{}); !errors.Is(err, errOut) || errors.Is(err, pagetoken.ErrInvalid) {
			t.Fatalf("Read %d: %v, want the store's error", i, err)
		}
	}
	if n := store.reads.Load(); n != 3 {
		t.Fatalf("%d reads, want one per call while no secret is known", n)
	}
}

// FuzzRead: Read never panics, and any token it accepts is the very token Make makes for the
// id it returns and the filter it was read with.
func FuzzRead(f *testing.F) {
	c := pagetoken.For(string(secret), nil)
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
