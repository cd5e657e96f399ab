// Package webhooktest is the conformance suite of webhook.Store: SQLite, Redis and the Redis
// Cluster run it, with the rules of package webhook (Lease, Hold) on top of each.
package webhooktest

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/webhook"
)

// NewStore returns an empty store of its own.
type NewStore func(tb testing.TB) webhook.Store

var (
	created = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	now     = created.Add(time.Hour) // the leases' clock: the rules take it as given
	errRef  = errors.New("refused by change")
)

// create stores a new endpoint at url (put).
func create(tb testing.TB, s webhook.Store, url string, types ...order.EventType) webhook.Endpoint {
	tb.Helper()
	e, err := webhook.NewEndpoint(url, types, "41", created)
	if err != nil {
		tb.Fatal(err)
	}
	if err := put(tb.Context(), s, e); err != nil {
		tb.Fatal(err)
	}
	return e
}

func put(ctx context.Context, s webhook.Store, e webhook.Endpoint) error {
	return s.Update(ctx, e.ID, func(stored *webhook.Endpoint) error {
		if stored.ID != "" {
			return errRef
		}
		*stored = e
		return nil
	})
}

func lease(t *testing.T, s webhook.Store, id, owner string, ttl time.Duration, at time.Time) bool {
	t.Helper()
	_, err := webhook.Lease(t.Context(), s, id, owner, ttl, at)
	if err != nil && !errors.Is(err, webhook.ErrLeaseLost) {
		t.Fatal(err)
	}
	return err == nil
}

func release(ctx context.Context, s webhook.Store, id, owner string, at time.Time) error {
	return webhook.Hold(ctx, s, id, owner, at, func(e *webhook.Endpoint) { e.LeaseOwner, e.LeaseExpires = "", time.Time{} })
}

func get(t *testing.T, s webhook.Store, id string) webhook.Endpoint {
	t.Helper()
	e, err := webhook.Get(t.Context(), s, id)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Run runs the suite.
func Run(t *testing.T, newStore NewStore) {
	t.Run("CreateGetListDelete", func(t *testing.T) {
		ctx, s := t.Context(), newStore(t)
		b := webhook.Endpoint{ID: "wh_b", URL: "http://b.example:8080/x?y=1", Secret: "whsec_b", CreatedAt: created.Add(time.Second + 7), // to the nanosecond
			Delivery: webhook.Delivery{Status: webhook.StatusActive, Position: "41"}}
		if err := put(ctx, s, b); err != nil {
			t.Fatal(err)
		}
		a := create(t, s, "https://a.example/hook", order.EventCancelled, order.EventShipped)
		if got := get(t, s, a.ID); !reflect.DeepEqual(got, a) {
			t.Fatalf("Get = %+v; want %+v", got, a)
		}
		list, err := s.List(ctx)
		if err != nil || len(list) != 2 || !reflect.DeepEqual(list[0], a) || !reflect.DeepEqual(list[1], b) {
			t.Fatalf("List = %+v, %v; want the oldest first", list, err)
		}
		if err := webhook.Delete(ctx, s, a.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := webhook.Get(ctx, s, a.ID); !errors.Is(err, webhook.ErrNotFound) {
			t.Fatalf("Get of a deleted endpoint: %v", err)
		}
		if err := webhook.Delete(ctx, s, a.ID); !errors.Is(err, webhook.ErrNotFound) {
			t.Fatalf("Delete of a deleted endpoint: %v", err)
		}
		if list, err := s.List(ctx); err != nil || len(list) != 1 || list[0].ID != b.ID {
			t.Fatalf("List after Delete = %+v, %v", list, err)
		}
	})

	// Update hands change what is stored, so a change can refuse a taken id; a refusal writes nothing.
	t.Run("UpdateSeesWhatIsStored", func(t *testing.T) {
		ctx, s := t.Context(), newStore(t)
		a := create(t, s, "https://a.example/hook")
		again := a
		again.URL = "https://elsewhere.example/"
		if err := put(ctx, s, again); !errors.Is(err, errRef) {
			t.Fatalf("Create of a taken id: %v", err)
		}
		if got := get(t, s, a.ID); got.URL != a.URL {
			t.Fatalf("the endpoint was overwritten: %+v", got)
		}
		err := s.Update(ctx, "wh_none", func(e *webhook.Endpoint) error {
			if e.ID != "" {
				t.Errorf("Update of no endpoint was given %+v", e)
			}
			e.ID, e.URL, e.CreatedAt = "wh_none", "https://none.example/", created
			return errRef
		})
		if _, gerr := webhook.Get(ctx, s, "wh_none"); !errors.Is(err, errRef) || !errors.Is(gerr, webhook.ErrNotFound) {
			t.Fatalf("a refused Update: %v; then Get: %v", err, gerr)
		}
	})

	t.Run("LeaseIsExclusiveUntilReleasedOrExpired", func(t *testing.T) {
		ctx, s := t.Context(), newStore(t)
		a := create(t, s, "https://a.example/hook")
		if !lease(t, s, a.ID, "one", time.Minute, now) {
			t.Fatal("the first owner could not take the lease")
		}
		want := a
		want.LeaseOwner, want.LeaseExpires = "one", now.Add(time.Minute)
		if got := get(t, s, a.ID); !reflect.DeepEqual(got, want) {
			t.Fatalf("Get under the lease = %+v; want %+v", got, want)
		}
		if !lease(t, s, a.ID, "one", time.Minute, now.Add(time.Second)) {
			t.Fatal("the owner could not renew its lease")
		}
		if lease(t, s, a.ID, "two", time.Minute, now.Add(time.Minute)) {
			t.Fatal("a second owner took a renewed lease")
		}
		if err := release(ctx, s, a.ID, "two", now); !errors.Is(err, webhook.ErrLeaseLost) {
			t.Fatalf("another owner's release: %v", err)
		}
		if lease(t, s, a.ID, "two", time.Minute, now) {
			t.Fatal("another owner's release gave the lease up")
		}
		if err := release(ctx, s, a.ID, "one", now); err != nil {
			t.Fatal(err)
		}
		if !lease(t, s, a.ID, "two", time.Millisecond, now) {
			t.Fatal("a released lease could not be taken")
		}
		if lease(t, s, a.ID, "one", time.Minute, now) || !lease(t, s, a.ID, "one", time.Minute, now.Add(time.Millisecond)) {
			t.Fatal("a lease was free before it expired, or held after")
		}
		if _, err := webhook.Lease(ctx, s, "wh_none", "one", time.Minute, now); !errors.Is(err, webhook.ErrNotFound) {
			t.Fatalf("Lease of no endpoint: %v", err)
		}
	})

	t.Run("LeaseIsTakenByOneOfManyAtOnce", func(t *testing.T) {
		s := newStore(t)
		a := create(t, s, "https://a.example/hook")
		var wg sync.WaitGroup
		var mu sync.Mutex
		var won []string
		for i := range 8 {
			wg.Go(func() {
				if lease(t, s, a.ID, string(rune('a'+i)), time.Minute, now) {
					mu.Lock()
					won = append(won, string(rune('a'+i)))
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(won) != 1 || get(t, s, a.ID).LeaseOwner != won[0] {
			t.Fatalf("%v took the lease at once, and it is %q's; want one", won, get(t, s, a.ID).LeaseOwner)
		}
	})

	t.Run("HoldOnlyUnderTheLease", func(t *testing.T) {
		ctx, s := t.Context(), newStore(t)
		a := create(t, s, "https://a.example/hook", order.EventCreated)
		d := webhook.Delivery{
			Status: webhook.StatusFailing, Position: "1700000000000-3", Attempts: 7,
			FirstFailure: created.Add(time.Hour), NextAttempt: created.Add(2 * time.Hour),
			LastAttempt: created.Add(90 * time.Minute), LastStatus: 503, LastError: "HTTP 503, with \"quotes\"\nand a line",
		}
		save := func(owner string, at time.Time, d webhook.Delivery) error {
			return webhook.Hold(ctx, s, a.ID, owner, at, func(e *webhook.Endpoint) { e.Delivery = d })
		}
		if err := save("one", now, d); !errors.Is(err, webhook.ErrLeaseLost) {
			t.Fatalf("a save without the lease: %v", err)
		}
		if !lease(t, s, a.ID, "one", time.Minute, now) {
			t.Fatal("no lease")
		}
		if err := save("two", now, d); !errors.Is(err, webhook.ErrLeaseLost) {
			t.Fatalf("a save by another owner: %v", err)
		}
		if err := save("one", now, d); err != nil {
			t.Fatal(err)
		}
		want := a
		want.Delivery, want.LeaseOwner, want.LeaseExpires = d, "one", now.Add(time.Minute)
		if got := get(t, s, a.ID); !reflect.DeepEqual(got, want) {
			t.Fatalf("Get = %+v; want %+v", got, want)
		}
		// Back to a zero state: the times and the error are cleared, not kept.
		d = webhook.Delivery{Status: webhook.StatusActive, Position: "9"}
		if err := save("one", now, d); err != nil {
			t.Fatal(err)
		}
		want.Delivery = d
		if got := get(t, s, a.ID); !reflect.DeepEqual(got, want) {
			t.Fatalf("Get = %+v; want %+v", got, want)
		}
		// A lease that expired holds no more, though no one took it: what "one" read under it
		// may be old. Not for a renewal, a save or a release.
		late := now.Add(time.Minute)
		for what, err := range map[string]error{
			"renewal": webhook.Hold(ctx, s, a.ID, "one", late, func(e *webhook.Endpoint) { e.LeaseExpires = late.Add(time.Minute) }),
			"save":    save("one", late, d),
			"release": release(ctx, s, a.ID, "one", late),
		} {
			if !errors.Is(err, webhook.ErrLeaseLost) {
				t.Fatalf("a %s under an expired lease: %v", what, err)
			}
		}
		if err := webhook.Delete(ctx, s, a.ID); err != nil {
			t.Fatal(err)
		}
		if err := save("one", now, d); !errors.Is(err, webhook.ErrNotFound) {
			t.Fatalf("a save to a deleted endpoint: %v", err)
		}
		if got, err := webhook.Get(ctx, s, a.ID); !errors.Is(err, webhook.ErrNotFound) {
			t.Fatalf("a save brought a deleted endpoint back: %+v, %v", got, err)
		}
	})
}
