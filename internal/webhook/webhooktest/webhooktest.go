// Package webhooktest is the conformance suite of webhook.Store: SQLite and Redis run it.
package webhooktest

import (
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

var created = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

func newEndpoint(tb testing.TB, url string, types ...order.EventType) webhook.Endpoint {
	tb.Helper()
	e, err := webhook.NewEndpoint(url, types, "41", created)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// Run runs the suite.
func Run(t *testing.T, newStore NewStore) {
	t.Run("CreateGetListDelete", func(t *testing.T) {
		ctx, s := t.Context(), newStore(t)
		a := newEndpoint(t, "https://a.example/hook", order.EventCancelled, order.EventShipped)
		b := newEndpoint(t, "http://b.example:8080/x?y=1")
		b.CreatedAt = created.Add(time.Second)
		for _, e := range []webhook.Endpoint{b, a} {
			if err := s.Create(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Get(ctx, a.ID)
		if err != nil || !reflect.DeepEqual(got, a) {
			t.Fatalf("Get = %+v, %v; want %+v", got, err, a)
		}
		list, err := s.List(ctx)
		if err != nil || len(list) != 2 || !reflect.DeepEqual(list[0], a) || !reflect.DeepEqual(list[1], b) {
			t.Fatalf("List = %+v, %v; want the oldest first", list, err)
		}
		if err := s.Delete(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, a.ID); !errors.Is(err, webhook.ErrNotFound) {
			t.Fatalf("Get of a deleted endpoint: %v", err)
		}
		if err := s.Delete(ctx, a.ID); !errors.Is(err, webhook.ErrNotFound) {
			t.Fatalf("Delete of a deleted endpoint: %v", err)
		}
		if list, err := s.List(ctx); err != nil || len(list) != 1 || list[0].ID != b.ID {
			t.Fatalf("List after Delete = %+v, %v", list, err)
		}
	})

	t.Run("CreateRefusesATakenID", func(t *testing.T) {
		ctx, s := t.Context(), newStore(t)
		a := newEndpoint(t, "https://a.example/hook")
		if err := s.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
		again := a
		again.URL = "https://elsewhere.example/"
		if err := s.Create(ctx, again); err == nil {
			t.Fatal("Create of a taken id succeeded")
		}
		if got, _ := s.Get(ctx, a.ID); got.URL != a.URL {
			t.Fatalf("the endpoint was overwritten: %+v", got)
		}
	})

	t.Run("LeaseIsExclusiveUntilReleasedOrExpired", func(t *testing.T) {
		ctx, s := t.Context(), newStore(t)
		a := newEndpoint(t, "https://a.example/hook")
		if err := s.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
		lease := func(owner string, ttl time.Duration) bool {
			t.Helper()
			ok, err := s.Lease(ctx, a.ID, owner, ttl)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		if !lease("one", time.Minute) {
			t.Fatal("the first owner could not take the lease")
		}
		if !lease("one", time.Minute) {
			t.Fatal("the owner could not renew its lease")
		}
		if lease("two", time.Minute) {
			t.Fatal("a second owner took a held lease")
		}
		if err := s.Release(ctx, a.ID, "two"); err != nil { // not its lease: nothing happens
			t.Fatal(err)
		}
		if lease("two", time.Minute) {
			t.Fatal("another owner's Release gave the lease up")
		}
		if err := s.Release(ctx, a.ID, "one"); err != nil {
			t.Fatal(err)
		}
		if !lease("two", time.Millisecond) {
			t.Fatal("a released lease could not be taken")
		}
		// An expired lease is free: wait for it by trying, not by sleeping.
		deadline := time.Now().Add(5 * time.Second)
		for !lease("one", time.Minute) {
			if time.Now().After(deadline) {
				t.Fatal("an expired lease could not be taken")
			}
		}
		if _, err := s.Lease(ctx, "wh_none", "one", time.Minute); !errors.Is(err, webhook.ErrNotFound) {
			t.Fatalf("Lease of no endpoint: %v", err)
		}
	})

	t.Run("RenewOnlyALeaseStillHeld", func(t *testing.T) {
		ctx, s := t.Context(), newStore(t)
		a := newEndpoint(t, "https://a.example/hook")
		if err := s.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
		lost := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, webhook.ErrLeaseLost) {
				t.Fatalf("Renew %s: %v; want ErrLeaseLost", what, err)
			}
		}
		lost("of a lease never taken", s.Renew(ctx, a.ID, "one", time.Minute))
		if ok, err := s.Lease(ctx, a.ID, "one", 10*time.Millisecond); !ok || err != nil {
			t.Fatalf("Lease = %v, %v", ok, err)
		}
		if err := s.Renew(ctx, a.ID, "one", time.Minute); err != nil {
			t.Fatalf("Renew of a held lease: %v", err)
		}
		lost("by another owner", s.Renew(ctx, a.ID, "two", time.Minute))
		if ok, _ := s.Lease(ctx, a.ID, "two", time.Minute); ok {
			t.Fatal("the renewed lease was taken: Renew did not extend it")
		}
		// Expired, though no one took it: what "one" read under it may be old.
		if ok, err := s.Lease(ctx, a.ID, "one", 10*time.Millisecond); !ok || err != nil {
			t.Fatalf("Lease = %v, %v", ok, err)
		}
		for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
		}
		lost("of an expired lease", s.Renew(ctx, a.ID, "one", time.Minute))
		if ok, err := s.Lease(ctx, a.ID, "one", time.Minute); !ok || err != nil {
			t.Fatalf("Lease = %v, %v", ok, err)
		}
		if err := s.Release(ctx, a.ID, "one"); err != nil {
			t.Fatal(err)
		}
		lost("of a released lease", s.Renew(ctx, a.ID, "one", time.Minute))
		if err := s.Renew(ctx, "wh_none", "one", time.Minute); !errors.Is(err, webhook.ErrNotFound) {
			t.Fatalf("Renew of no endpoint: %v", err)
		}
	})

	t.Run("LeaseIsTakenByOneOfManyAtOnce", func(t *testing.T) {
		ctx, s := t.Context(), newStore(t)
		a := newEndpoint(t, "https://a.example/hook")
		if err := s.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := s.Lease(ctx, a.ID, string(rune('a'+i)), time.Minute)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					won++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if won != 1 {
			t.Fatalf("%d owners took the lease at once, want 1", won)
		}
	})

	t.Run("SaveOnlyUnderTheLease", func(t *testing.T) {
		ctx, s := t.Context(), newStore(t)
		a := newEndpoint(t, "https://a.example/hook", order.EventCreated)
		if err := s.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
		d := webhook.Delivery{
			Status: webhook.StatusFailing, Position: "1700000000000-3", Attempts: 7,
			FirstFailure: created.Add(time.Hour), NextAttempt: created.Add(2 * time.Hour),
			LastAttempt: created.Add(90 * time.Minute), LastStatus: 503, LastError: "HTTP 503, with \"quotes\"\nand a line",
		}
		if err := s.Save(ctx, a.ID, "one", d); !errors.Is(err, webhook.ErrLeaseLost) {
			t.Fatalf("Save without the lease: %v", err)
		}
		if ok, err := s.Lease(ctx, a.ID, "one", time.Minute); !ok || err != nil {
			t.Fatalf("Lease = %v, %v", ok, err)
		}
		if err := s.Save(ctx, a.ID, "two", d); !errors.Is(err, webhook.ErrLeaseLost) {
			t.Fatalf("Save by another owner: %v", err)
		}
		if err := s.Save(ctx, a.ID, "one", d); err != nil {
			t.Fatal(err)
		}
		want := a
		want.Delivery = d
		if got, err := s.Get(ctx, a.ID); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("Get = %+v, %v; want %+v", got, err, want)
		}
		// Back to a zero state: the times and the error are cleared, not kept.
		d = webhook.Delivery{Status: webhook.StatusActive, Position: "9"}
		if err := s.Save(ctx, a.ID, "one", d); err != nil {
			t.Fatal(err)
		}
		want.Delivery = d
		if got, err := s.Get(ctx, a.ID); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("Get = %+v, %v; want %+v", got, err, want)
		}
		// A lease that expired holds no more, though no one took it.
		if ok, err := s.Lease(ctx, a.ID, "one", 10*time.Millisecond); !ok || err != nil {
			t.Fatalf("Lease = %v, %v", ok, err)
		}
		for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
		}
		if err := s.Save(ctx, a.ID, "one", d); !errors.Is(err, webhook.ErrLeaseLost) {
			t.Fatalf("Save under an expired lease: %v", err)
		}
		if err := s.Delete(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.Save(ctx, a.ID, "one", d); !errors.Is(err, webhook.ErrNotFound) && !errors.Is(err, webhook.ErrLeaseLost) {
			t.Fatalf("Save of a deleted endpoint: %v", err)
		}
		if got, err := s.Get(ctx, a.ID); !errors.Is(err, webhook.ErrNotFound) {
			t.Fatalf("Save brought a deleted endpoint back: %+v, %v", got, err)
		}
	})

	t.Run("EnableOnlyAnEndpointNotActive", func(t *testing.T) {
		ctx, s := t.Context(), newStore(t)
		a := newEndpoint(t, "https://a.example/hook", order.EventShipped)
		if err := s.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := s.Enable(ctx, a.ID, "41", "41"); !errors.Is(err, webhook.ErrActive) {
			t.Fatalf("Enable of an active endpoint: %v", err)
		}
		if ok, err := s.Lease(ctx, a.ID, "one", time.Minute); !ok || err != nil {
			t.Fatalf("Lease = %v, %v", ok, err)
		}
		failing := webhook.Delivery{
			Status: webhook.StatusFailing, Position: "41", Attempts: 19, FirstFailure: created.Add(time.Hour),
			NextAttempt: created.Add(3 * time.Hour), LastAttempt: created.Add(25 * time.Hour), LastStatus: 503, LastError: "gave up",
		}
		if err := s.Save(ctx, a.ID, "one", failing); err != nil {
			t.Fatal(err)
		}
		if err := s.Enable(ctx, a.ID, "40", "50"); !errors.Is(err, webhook.ErrMoved) {
			t.Fatalf("Enable from a position not the endpoint's: %v", err)
		}
		if got, _ := s.Get(ctx, a.ID); !reflect.DeepEqual(got.Delivery, failing) {
			t.Fatalf("a refused Enable changed the state: %+v", got.Delivery)
		}
		if err := s.Enable(ctx, a.ID, "41", "50"); err != nil {
			t.Fatal(err)
		}
		// Active from the new position, the failure gone; the last attempt stays, as history.
		want := a
		want.Delivery = webhook.Delivery{Status: webhook.StatusActive, Position: "50", LastAttempt: failing.LastAttempt, LastStatus: 503}
		if got, err := s.Get(ctx, a.ID); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("Get after Enable = %+v, %v; want %+v", got, err, want)
		}
		if err := s.Enable(ctx, a.ID, "50", "50"); !errors.Is(err, webhook.ErrActive) {
			t.Fatalf("a second Enable: %v", err)
		}
		if err := s.Save(ctx, a.ID, "one", webhook.Delivery{Status: webhook.StatusDisabled, Position: "50", LastStatus: 410, LastError: "410 Gone"}); err != nil {
			t.Fatal(err)
		}
		if err := s.Enable(ctx, a.ID, "50", "50"); err != nil {
			t.Fatalf("Enable of a disabled endpoint: %v", err)
		}
		if got, _ := s.Get(ctx, a.ID); got.Status != webhook.StatusActive || got.LastError != "" || got.LastStatus != 410 {
			t.Fatalf("a disabled endpoint enabled: %+v", got.Delivery)
		}
		if err := s.Enable(ctx, "wh_none", "50", "50"); !errors.Is(err, webhook.ErrNotFound) {
			t.Fatalf("Enable of no endpoint: %v", err)
		}
	})
}
