package ordertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
)

// EventStore is a store and its log of changes.
type EventStore interface {
	order.Store
	order.EventLog
}

// EventHarness makes stores for RunEvents and changes them as each kind of writer does.
type EventHarness struct {
	// New returns a store holding exactly orders.
	New func(tb testing.TB, orders []order.Order) EventStore
	// Import writes orders as `orderd import` does.
	Import func(tb testing.TB, s EventStore, orders []order.Order) error
	// Create, Ship and Update write as another system does, by the means the store's
	// documentation gives them (SQL on the file; the Redis snippets). Ship ships a pending
	// order; Update changes an order's fields but its status.
	Create func(tb testing.TB, s EventStore, o order.Order)
	Ship   func(tb testing.TB, s EventStore, id int64)
	Update func(tb testing.TB, s EventStore, o order.Order)
	// BreakLog makes the store unable to record an event from now on.
	BreakLog func(tb testing.TB, s EventStore)
}

// RunEvents runs the conformance suite of order.EventLog.
func RunEvents(t *testing.T, h EventHarness) {
	ctx := context.Background()
	pending := Fixture()[1] // id 1
	shipped := Fixture()[2] // id 2
	cancelled := Fixture()[3]
	newOrder := order.Order{ID: 42, PetID: 7, Quantity: 3, ShipDate: pending.ShipDate, Status: order.StatusPending}

	t.Run("ACancelRecordsOneEvent", func(t *testing.T) {
		s := h.New(t, Fixture())
		from := lastID(t, s)
		before := time.Now()
		got, _, err := s.Cancel(ctx, pending.ID)
		if err != nil {
			t.Fatal(err)
		}
		events := readAll(t, s, from)
		assertEvents(t, events, []order.Event{{Type: order.EventCancelled, Order: got}})
		// The store's clock is this machine's; a second either way allows for Redis's.
		if e := events[0]; e.Time.Before(before.Add(-time.Second)) || e.Time.After(time.Now().Add(time.Second)) {
			t.Fatalf("event time %s, want about %s", e.Time, before)
		}
		if last := lastID(t, s); last != events[0].ID {
			t.Fatalf("LastEventID = %q, want the cancel's event %q", last, events[0].ID)
		}
	})

	t.Run("AChangeThatChangesNothingRecordsNothing", func(t *testing.T) {
		s := h.New(t, Fixture())
		from := lastID(t, s)
		for _, id := range []int64{cancelled.ID, shipped.ID, 4} { // already cancelled, refused, missing
			s.Cancel(ctx, id)
		}
		if err := h.Import(t, s, Fixture()); err != nil { // the same orders again
			t.Fatal(err)
		}
		assertEvents(t, readAll(t, s, from), nil)
		if last := lastID(t, s); last != from {
			t.Fatalf("LastEventID moved from %q to %q without a change", from, last)
		}
	})

	t.Run("AnImportRecordsWhatItChanged", func(t *testing.T) {
		s := h.New(t, Fixture())
		from := lastID(t, s)
		changed := pending
		changed.Quantity++
		statusOnly := shipped
		statusOnly.Status = order.StatusPending // an import never changes a status: no event
		if err := h.Import(t, s, []order.Order{newOrder, changed, statusOnly, cancelled}); err != nil {
			t.Fatal(err)
		}
		got := readAll(t, s, from)
		// The events of one import may come in any order: it is one change of many orders.
		slices.SortFunc(got, func(a, b order.Event) int { return int(a.Order.ID - b.Order.ID) })
		assertEvents(t, got, []order.Event{{Type: order.EventUpdated, Order: changed}, {Type: order.EventCreated, Order: newOrder}})
	})

	t.Run("AnotherSystemsWritesAreRecorded", func(t *testing.T) {
		s := h.New(t, Fixture())
		from := lastID(t, s)
		h.Create(t, s, newOrder)
		h.Ship(t, s, pending.ID)
		moved := cancelled
		moved.PetID, moved.Complete = 99, true
		h.Update(t, s, moved)
		wantShipped := pending
		wantShipped.Status = order.StatusShipped
		assertEvents(t, readAll(t, s, from), []order.Event{
			{Type: order.EventCreated, Order: newOrder},
			{Type: order.EventShipped, Order: wantShipped},
			{Type: order.EventUpdated, Order: moved},
		})
	})

	t.Run("AChangeWhoseEventCannotBeWrittenIsNotMade", func(t *testing.T) {
		// Were the event written in a step of its own after the change, the cancel would be
		// made and answered while its event was lost: this test would see a cancelled order.
		s := h.New(t, Fixture())
		v0, _ := s.Version(ctx)
		// Read before the log breaks: a View reads the log to follow the orders, and after it
		// answers from what it read while the version stays (checked below).
		if _, err := Viewed(s).List(ctx); err != nil {
			t.Fatal(err)
		}
		h.BreakLog(t, s)
		if _, _, err := s.Cancel(ctx, pending.ID); err == nil {
			t.Fatal("the cancel succeeded though its event could not be recorded")
		}
		if err := h.Import(t, s, []order.Order{newOrder}); err == nil {
			t.Fatal("the import succeeded though its events could not be recorded")
		}
		list, err := Viewed(s).List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		assertOrders(t, list, Fixture())
		if v, _ := s.Version(ctx); v != v0 {
			t.Fatalf("the version moved from %d to %d, with nothing changed", v0, v)
		}
	})

	t.Run("PagesReadEveryEventOnceInOrderFromEveryBoundary", func(t *testing.T) {
		s := h.New(t, Fixture())
		from := lastID(t, s)
		want := changeEach(t, s, h)
		all := readAll(t, s, from)
		assertEvents(t, all, want)
		for i := range all {
			if i > 0 && all[i].ID == all[i-1].ID {
				t.Fatalf("events %d and %d share the id %q", i-1, i, all[i].ID)
			}
			// After each event, exactly the ones after it, whatever the page size.
			for _, limit := range []int{1, 2, 1000} {
				page, err := s.Events(ctx, order.EventQuery{After: all[i].ID, Limit: limit})
				if err != nil {
					t.Fatal(err)
				}
				rest := all[i+1:]
				n := min(limit, len(rest))
				assertEvents(t, page.Events, rest[:n])
				wantLast := all[i].ID
				if n > 0 {
					wantLast = rest[n-1].ID
				}
				if page.Last != wantLast || page.More != (n == limit) {
					t.Fatalf("after #%d, limit %d: Last %q More %v; want %q %v", i, limit, page.Last, page.More, wantLast, n == limit)
				}
			}
		}
		// "" reads from the oldest kept: the fixture's creation, then the changes.
		page, err := s.Events(ctx, order.EventQuery{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Events) < len(all) || !slices.EqualFunc(page.Events[len(page.Events)-len(all):], all, sameEvent) {
			t.Fatalf("reading from the oldest: %d events that do not end with the %d changes", len(page.Events), len(all))
		}
	})

	t.Run("TypesFilterButLastMovesOn", func(t *testing.T) {
		s := h.New(t, Fixture())
		from := lastID(t, s)
		want := changeEach(t, s, h)
		all := readAll(t, s, from)
		page, err := s.Events(ctx, order.EventQuery{After: from, Types: []order.EventType{order.EventCancelled, order.EventShipped}, Limit: len(want) + 1})
		if err != nil {
			t.Fatal(err)
		}
		var filtered []order.Event
		for _, e := range want {
			if e.Type == order.EventCancelled || e.Type == order.EventShipped {
				filtered = append(filtered, e)
			}
		}
		assertEvents(t, page.Events, filtered)
		if page.Last != all[len(all)-1].ID || page.More {
			t.Fatalf("Last %q More %v; want the newest examined %q, no more", page.Last, page.More, all[len(all)-1].ID)
		}
		// A page whose events all have other types is empty, yet moves on.
		page, err = s.Events(ctx, order.EventQuery{After: from, Types: []order.EventType{order.EventUpdated}, Limit: 1})
		if err != nil || len(page.Events) != 0 || page.Last != all[0].ID || !page.More {
			t.Fatalf("= %+v, %v; want no events, Last %q, More", page, err, all[0].ID)
		}
	})

	t.Run("RetentionExpiresExactlyThePositionsItCut", func(t *testing.T) {
		s := h.New(t, nil)
		from := lastID(t, s)
		changeEach(t, s, h)
		all := readAll(t, s, from)
		const keep = 2
		dropped, err := s.Trim(ctx, order.Retention{MaxCount: keep})
		if err != nil || dropped != int64(len(all)-keep) {
			t.Fatalf("Trim = %d, %v; want %d dropped", dropped, err, len(all)-keep)
		}
		cut := len(all) - keep // all[:cut] are gone
		for i, e := range all {
			_, err := s.Events(ctx, order.EventQuery{After: e.ID, Limit: 10})
			// Reading after all[cut-1] loses nothing: every event after it is kept.
			if wantExpired := i < cut-1; errors.Is(err, order.ErrEventsExpired) != wantExpired {
				t.Fatalf("after event #%d of %d (%d dropped): error %v, want expired = %v", i, len(all), cut, err, wantExpired)
			}
		}
		if _, err := s.Events(ctx, order.EventQuery{After: from, Limit: 10}); !errors.Is(err, order.ErrEventsExpired) {
			t.Fatalf("after the position before every event: %v, want ErrEventsExpired", err)
		}
		page, err := s.Events(ctx, order.EventQuery{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		assertEvents(t, page.Events, all[cut:])

		// By age: everything recorded before now goes; the newest position stays readable. The
		// clock passes a Redis millisecond first (a bounded wait: the event was just made).
		for time.Since(all[len(all)-1].Time) <= 2*time.Millisecond {
		}
		if _, err := s.Trim(ctx, order.Retention{MaxAge: time.Nanosecond}); err != nil {
			t.Fatal(err)
		}
		newest := all[len(all)-1].ID
		if last := lastID(t, s); last != newest {
			t.Fatalf("LastEventID = %q after trimming, want %q", last, newest)
		}
		page, err = s.Events(ctx, order.EventQuery{After: newest, Limit: 10})
		if err != nil || len(page.Events) != 0 || page.Last != newest {
			t.Fatalf("after the newest = %+v, %v; want an empty page", page, err)
		}
		page, err = s.Events(ctx, order.EventQuery{Limit: 10})
		if err != nil || len(page.Events) != 0 || page.Last != newest {
			t.Fatalf("from the oldest kept, with none kept = %+v, %v; want an empty page at %q", page, err, newest)
		}
		if _, err := s.Events(ctx, order.EventQuery{After: all[cut].ID, Limit: 10}); !errors.Is(err, order.ErrEventsExpired) {
			t.Fatalf("after a position cut by age: %v, want ErrEventsExpired", err)
		}
		// A change after the trim is read after the newest as any other.
		later := newOrder
		later.ID = 44
		h.Create(t, s, later)
		assertEvents(t, readAll(t, s, newest), []order.Event{{Type: order.EventCreated, Order: later}})
	})

	t.Run("APositionThisLogNeverReachedIsRefused", func(t *testing.T) {
		busy := h.New(t, nil)
		changeEach(t, busy, h)
		past := lastID(t, busy) // before New, which may start the same storage over
		fresh := h.New(t, nil)
		if _, err := fresh.Events(ctx, order.EventQuery{After: past, Limit: 10}); !errors.Is(err, order.ErrEventsExpired) {
			t.Fatalf("a position past the newest: %v, want ErrEventsExpired", err)
		}
		if page, err := fresh.Events(ctx, order.EventQuery{After: lastID(t, fresh), Limit: 10}); err != nil || len(page.Events) != 0 {
			t.Fatalf("after an empty log's beginning = %+v, %v; want an empty page", page, err)
		}
	})

	t.Run("WaitForEventsReturnsOnTheNextChange", func(t *testing.T) {
		s := h.New(t, Fixture())
		from := lastID(t, s)
		quick, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if err := s.WaitForEvents(quick, from); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("WaitForEvents with nothing new = %v, want the context's deadline", err)
		}
		waited := make(chan error, 1)
		waitCtx, stop := context.WithTimeout(ctx, 10*time.Second)
		defer stop()
		go func() {
			for {
				// It may return early: it ends here only once the log has moved.
				if err := s.WaitForEvents(waitCtx, from); err != nil || lastID(t, s) != from {
					waited <- err
					return
				}
			}
		}()
		if _, _, err := s.Cancel(ctx, pending.ID); err != nil {
			t.Fatal(err)
		}
		if err := <-waited; err != nil {
			t.Fatalf("WaitForEvents after a cancel = %v", err)
		}
		if err := s.WaitForEvents(ctx, from); err != nil {
			t.Fatalf("WaitForEvents with an event already after = %v", err)
		}
	})

	t.Run("ConcurrentCancelsRecordOneEventEach", func(t *testing.T) {
		orders := Many(40)
		s := h.New(t, orders)
		from := lastID(t, s)
		var wg sync.WaitGroup
		for range 4 {
			for _, o := range orders {
				wg.Go(func() { s.Cancel(ctx, o.ID) })
			}
		}
		wg.Wait()
		var want []int64
		for _, o := range orders {
			if o.Status == order.StatusPending {
				want = append(want, o.ID)
			}
		}
		var got []int64
		for _, e := range readAll(t, s, from) {
			if e.Type != order.EventCancelled || e.Order.Status != order.StatusCancelled {
				t.Fatalf("event %+v; want order.cancelled", e)
			}
			got = append(got, e.Order.ID)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("cancelled events for %v, want one for each of %v", got, want)
		}
	})
}

// changeEach makes one change of each kind, one after the other, and returns their events
// as they must be read (without ids and times).
func changeEach(tb testing.TB, s EventStore, h EventHarness) []order.Event {
	tb.Helper()
	ctx := context.Background()
	a := order.Order{ID: 42, PetID: 7, Quantity: 3, ShipDate: time.Date(2026, 11, 20, 8, 30, 0, 0, time.UTC), Status: order.StatusPending}
	b := a
	b.ID = 43
	if err := h.Import(tb, s, []order.Order{a}); err != nil {
		tb.Fatal(err)
	}
	h.Create(tb, s, b)
	cancelledA, _, err := s.Cancel(ctx, a.ID)
	if err != nil {
		tb.Fatal(err)
	}
	h.Ship(tb, s, b.ID)
	shippedB := b
	shippedB.Status = order.StatusShipped
	updatedB := shippedB
	updatedB.Quantity = 9
	h.Update(tb, s, updatedB)
	return []order.Event{
		{Type: order.EventCreated, Order: a},
		{Type: order.EventCreated, Order: b},
		{Type: order.EventCancelled, Order: cancelledA},
		{Type: order.EventShipped, Order: shippedB},
		{Type: order.EventUpdated, Order: updatedB},
	}
}

func lastID(tb testing.TB, s order.EventLog) string {
	tb.Helper()
	id, err := s.LastEventID(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return id
}

// readAll reads every event after from, a page of 2 at a time, checking each page's Last.
func readAll(tb testing.TB, s order.EventLog, from string) []order.Event {
	tb.Helper()
	var out []order.Event
	for after := from; ; {
		page, err := s.Events(context.Background(), order.EventQuery{After: after, Limit: 2})
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, page.Events...)
		if n := len(page.Events); n > 0 && page.Last != page.Events[n-1].ID {
			tb.Fatalf("page Last %q, want its last event's %q", page.Last, page.Events[n-1].ID)
		}
		if !page.More {
			return out
		}
		after = page.Last
	}
}

func sameEvent(a, b order.Event) bool {
	return a.ID == b.ID && a.Type == b.Type && a.Time.Equal(b.Time) && describe(a.Order) == describe(b.Order)
}

// assertEvents compares types and orders; ids and times are the store's.
func assertEvents(tb testing.TB, got, want []order.Event) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Fatalf("got %d events, want %d:\n%s", len(got), len(want), describeEvents(got))
	}
	for i := range want {
		if got[i].Type != want[i].Type || describe(got[i].Order) != describe(want[i].Order) || got[i].ID == "" {
			tb.Fatalf("event #%d = %s %s %s, want %s %s", i, got[i].ID, got[i].Type, describe(got[i].Order), want[i].Type, describe(want[i].Order))
		}
	}
}

func describe(o order.Order) string {
	return fmt.Sprintf("{id %d pet %d qty %d ship %s complete %v %s}", o.ID, o.PetID, o.Quantity,
		o.ShipDate.UTC().Format(time.RFC3339Nano), o.Complete, o.Status)
}

func describeEvents(events []order.Event) string {
	var s string
	for _, e := range events {
		s += fmt.Sprintf("  %s %s %s\n", e.ID, e.Type, describe(e.Order))
	}
	return s
}
