package sqlitestore_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/sqlitestore"
)

// eventStore is the stores of one file, and the file as another system opens it.
type eventStore struct {
	*sqlitestore.Orders
	order.EventLog // *sqlitestore.Events, whose field name would hide its method Events
	db             *sqlitestore.DB
	raw            *sql.DB
}

// eventHarness writes as `orderd import` does through the store's DB, and as another system
// does in plain SQL through a handle of its own (docs/design.md, "Order events").
func eventHarness(newStore func(tb testing.TB, path string) ordertest.EventStore) ordertest.EventHarness {
	exec := func(tb testing.TB, s ordertest.EventStore, query string, args ...any) {
		tb.Helper()
		res, err := s.(eventStore).raw.Exec(query, args...)
		if err != nil {
			tb.Fatalf("%s: %v", query, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			tb.Fatalf("%s %v: %d rows changed, want 1", query, args, n)
		}
	}
	return ordertest.EventHarness{
		New: func(tb testing.TB, orders []order.Order) ordertest.EventStore {
			return newStore(tb, newFile(tb, orders))
		},
		Import: func(tb testing.TB, s ordertest.EventStore, orders []order.Order) error {
			_, err := s.(eventStore).db.Import(context.Background(), orders, nil)
			return err
		},
		Create: func(tb testing.TB, s ordertest.EventStore, o order.Order) {
			exec(tb, s, "INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status) VALUES (?, ?, ?, ?, ?, ?)",
				o.ID, o.PetID, o.Quantity, shipDate(o), o.Complete, string(o.Status))
		},
		Ship: func(tb testing.TB, s ordertest.EventStore, id int64) {
			exec(tb, s, "UPDATE orders SET status = 'shipped' WHERE id = ? AND status = 'pending'", id)
		},
		Update: func(tb testing.TB, s ordertest.EventStore, o order.Order) {
			exec(tb, s, "UPDATE orders SET pet_id = ?, quantity = ?, ship_date = ?, complete = ? WHERE id = ?",
				o.PetID, o.Quantity, shipDate(o), o.Complete, o.ID)
		},
		BreakLog: breakLog,
	}
}

// breakLog makes every insert into the log fail, so that the change making it must fail whole.
func breakLog(tb testing.TB, s ordertest.EventStore) {
	tb.Helper()
	const q = "CREATE TRIGGER break_log BEFORE INSERT ON order_events BEGIN SELECT RAISE(ABORT, 'log broken'); END"
	if _, err := s.(eventStore).raw.Exec(q); err != nil {
		tb.Fatal(err)
	}
}

// openEvents returns the stores of one handle on path, and a raw handle beside it.
func openEvents(tb testing.TB, path string) ordertest.EventStore {
	db := mustOpen(tb, path)
	return eventStore{sqlitestore.NewOrders(db), sqlitestore.NewEvents(db), db, rawHandle(tb, path)}
}

// rawHandle opens path as another program would, without this package.
func rawHandle(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { raw.Close() })
	return raw
}

// shipDate is the text the schema keeps a ship date as.
func shipDate(o order.Order) string { return o.ShipDate.UTC().Format("2006-01-02T15:04:05.000000000Z") }

func TestEventsConformance(t *testing.T) {
	ordertest.RunEvents(t, eventHarness(openEvents))
}

// TestEventsConformanceAcrossHandles: the log is read, and waited on, through another handle
// than the one that cancels and imports, as by another process.
func TestEventsConformanceAcrossHandles(t *testing.T) {
	ordertest.RunEvents(t, eventHarness(func(tb testing.TB, path string) ordertest.EventStore {
		writer, reader := mustOpen(tb, path), mustOpen(tb, path)
		return eventStore{sqlitestore.NewOrders(writer), sqlitestore.NewEvents(reader), writer, rawHandle(tb, path)}
	}))
}

// TestSharedWaitsConformance: the log as an instance waits on it, one wait for all, keeps its contract.
func TestSharedWaitsConformance(t *testing.T) {
	ordertest.RunEvents(t, eventHarness(func(tb testing.TB, path string) ordertest.EventStore {
		s := openEvents(tb, path).(eventStore)
		s.EventLog = order.SharedWaits(s.EventLog)
		return s
	}))
}

// TestBulkImportRecordsEachRow: an import into an empty table, which drops the triggers for
// its rows (import.go, bulkLoad), records one order.created per row all the same, and leaves the triggers
// recording the changes after it; a bulk import whose events cannot be written writes nothing.
func TestBulkImportRecordsEachRow(t *testing.T) {
	ctx := context.Background()
	orders := ordertest.Many(12_345) // more than one statement's rows
	path := newFile(t, orders)
	s := openEvents(t, path)
	var got []order.Event
	for after := "0"; ; {
		page, err := s.Events(ctx, order.EventQuery{After: after, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page.Events...)
		if !page.More {
			break
		}
		after = page.Last
	}
	if len(got) != len(orders) {
		t.Fatalf("%d events for %d orders imported", len(got), len(orders))
	}
	for i, e := range got {
		if e.Type != order.EventCreated || e.Order != orders[i] || !e.Time.Equal(got[0].Time) {
			t.Fatalf("event #%d = %+v, want order.created of %+v at the import's time", i, e, orders[i])
		}
	}
	if _, err := s.(eventStore).raw.Exec("UPDATE orders SET quantity = quantity + 1 WHERE id = ?", orders[7].ID); err != nil {
		t.Fatal(err)
	}
	if page, err := s.Events(ctx, order.EventQuery{After: got[len(got)-1].ID, Limit: 10}); err != nil ||
		len(page.Events) != 1 || page.Events[0].Type != order.EventUpdated || page.Events[0].Order.ID != orders[7].ID {
		t.Fatalf("the log after an update: %+v, %v; want the triggers back, recording it", page, err)
	}

	broken := openEvents(t, newFile(t, nil))
	breakLog(t, broken)
	if _, err := broken.(eventStore).db.Import(ctx, orders, nil); err == nil {
		t.Fatal("a bulk import succeeded though its events could not be recorded")
	}
	if list, err := ordertest.Fresh(broken).List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("after the failed import: %d orders, %v", len(list), err)
	}
}

// TestEventRowsAreChecked: an event row another program wrote in a form the service cannot
// use is ErrCorrupt, and the error names it.
func TestEventRowsAreChecked(t *testing.T) {
	ctx := context.Background()
	for _, set := range []string{"type = 'order.lost'", "time = 'yesterday'", "status = 'lost'"} {
		path := newFile(t, ordertest.Fixture())
		s, raw := openEvents(t, path), rawDB(t, path)
		var second string // the log's second event
		if err := raw.QueryRow("SELECT id FROM order_events ORDER BY id LIMIT 1 OFFSET 1").Scan(&second); err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec("UPDATE order_events SET "+set+" WHERE id = ?", second); err != nil {
			t.Fatalf("%s: %v", set, err)
		}
		if _, err := s.Events(ctx, order.EventQuery{Limit: 10}); !errors.Is(err, order.ErrCorrupt) || !strings.Contains(err.Error(), "event "+second) {
			t.Errorf("after SET %s: %v, want ErrCorrupt naming event %s", set, err, second)
		}
	}
}

// TestEventPositionsAreTheLogsOwn: a position is an id as the log writes it; any other form
// is refused as a position the log cannot read on from.
func TestEventPositionsAreTheLogsOwn(t *testing.T) {
	s := openEvents(t, newFile(t, ordertest.Fixture()))
	for _, after := range []string{"x", "+1", "01", "-0", " 1", "99999999999999999999"} {
		if _, err := s.Events(context.Background(), order.EventQuery{After: after, Limit: 1}); !errors.Is(err, order.ErrEventsExpired) {
			t.Errorf("after %q: %v, want ErrEventsExpired", after, err)
		}
	}
}

// TestWaitForEventsSeesARawWrite: a wait on one handle returns on a commit made by plain SQL,
// which the wal-index header shows.
func TestWaitForEventsSeesARawWrite(t *testing.T) {
	ctx := context.Background()
	s := openEvents(t, newFile(t, ordertest.Fixture()))
	from, _ := s.LastEventID(ctx)
	waited := make(chan error, 1)
	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	go func() { waited <- s.WaitForEvents(waitCtx, from) }()
	if _, err := s.(eventStore).raw.Exec("UPDATE orders SET status = 'shipped' WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatalf("WaitForEvents = %v", err)
	}
}
