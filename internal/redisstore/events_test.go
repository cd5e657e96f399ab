package redisstore_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
)

// eventStore is the orders and their log, of one prefix.
type eventStore struct {
	*redisstore.Orders
	order.EventLog // *redisstore.Events, whose field name would hide its method Events
	rdb            redis.UniversalClient
	prefix         string
}

// eventHarness writes as docs/redis-layout.md says: orderd's import, and the page's own
// snippets, run as written there, for the other systems' writes.
func eventHarness(rdb redis.UniversalClient) ordertest.EventHarness {
	of := func(s ordertest.EventStore) *eventStore { return s.(*eventStore) }
	snippet := func(tb testing.TB, s ordertest.EventStore, name string, args ...any) {
		tb.Helper()
		e := of(s)
		src, keys := redistest.Snippet(tb, name, e.prefix)
		if n, err := e.rdb.Eval(context.Background(), src, keys, append(args, rand.Text())...).Int(); err != nil || n != 1 {
			tb.Fatalf("snippet %s: %d, %v; want 1", name, n, err)
		}
	}
	return ordertest.EventHarness{
		New: func(tb testing.TB, orders []order.Order) ordertest.EventStore {
			tb.Helper()
			prefix := redistest.Prefix(tb)
			o, err := redisstore.NewOrders(rdb, prefix, 2*time.Second)
			if err != nil {
				tb.Fatal(err)
			}
			if _, err := o.Import(context.Background(), orders); err != nil {
				tb.Fatal(err)
			}
			e, err := redisstore.NewEvents(rdb, prefix, 2*time.Second)
			if err != nil {
				tb.Fatal(err)
			}
			return &eventStore{Orders: o, EventLog: e, rdb: rdb, prefix: prefix}
		},
		Import: func(tb testing.TB, s ordertest.EventStore, orders []order.Order) error {
			_, err := of(s).Orders.Import(context.Background(), orders)
			return err
		},
		Create: func(tb testing.TB, s ordertest.EventStore, o order.Order) {
			snippet(tb, s, "create", strconv.FormatInt(o.ID, 10), dataJSON(o))
		},
		Ship: func(tb testing.TB, s ordertest.EventStore, id int64) {
			snippet(tb, s, "ship", strconv.FormatInt(id, 10))
		},
		Update: func(tb testing.TB, s ordertest.EventStore, o order.Order) {
			snippet(tb, s, "update", strconv.FormatInt(o.ID, 10), dataJSON(o))
		},
		BreakLog: func(tb testing.TB, s ordertest.EventStore) {
			e := of(s)
			if err := e.rdb.Set(context.Background(), "{"+e.prefix+":orders}:events", "x", 0).Err(); err != nil {
				tb.Fatal(err)
			}
		},
	}
}

// dataJSON is o's data as the layout writes it.
func dataJSON(o order.Order) string {
	return fmt.Sprintf(`{"petId":%d,"quantity":%d,"shipDate":%q,"complete":%t}`,
		o.PetID, o.Quantity, o.ShipDate.UTC().Format(time.RFC3339Nano), o.Complete)
}

func TestEventsConformance(t *testing.T) {
	ordertest.RunEvents(t, eventHarness(client(t, redistest.Start(t))))
}

// TestEventsConformanceOnCluster: the stream shares the orders' hash tag, or the scripts that
// write both would fail with CROSSSLOT; the wait's XREAD goes to the stream's node.
func TestEventsConformanceOnCluster(t *testing.T) {
	rdb, err := redisstore.Open(redistest.StartCluster(t).URL(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	ordertest.RunEvents(t, eventHarness(rdb))
}

// TestBadEventsAreCorrupt: an entry another writer got wrong, or a key of another type, is a
// corrupt record, not a page nor an outage.
func TestBadEventsAreCorrupt(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv)
	ctx := context.Background()
	good := []string{"type", "order.created", "id", "1", "data", `{"petId":1,"quantity":1,"shipDate":"2026-11-20T00:00:00Z","complete":false}`, "status", "pending"}
	for name, fields := range map[string][]string{
		"no type":   good[2:],
		"bad type":  append([]string{"type", "order.lost"}, good[2:]...),
		"bad id":    append(append([]string{}, good[:2]...), append([]string{"id", "x"}, good[4:]...)...),
		"bad data":  append(append([]string{}, good[:4]...), "data", "not json", "status", "pending"),
		"no status": good[:6],
	} {
		prefix := redistest.Prefix(t)
		e, _ := redisstore.NewEvents(rdb, prefix, time.Second)
		srv.MustDo(t, append([]string{"XADD", "{" + prefix + ":orders}:events", "*"}, fields...)...)
		if page, err := e.Events(ctx, order.EventQuery{Limit: 10}); !errors.Is(err, order.ErrCorrupt) {
			t.Errorf("%s: %+v, %v; want order.ErrCorrupt", name, page, err)
		}
	}
	prefix := redistest.Prefix(t)
	e, _ := redisstore.NewEvents(rdb, prefix, time.Second)
	srv.MustDo(t, "SET", "{"+prefix+":orders}:events", "x")
	if _, err := e.LastEventID(ctx); !errors.Is(err, order.ErrCorrupt) {
		t.Errorf("LastEventID of a string: %v; want order.ErrCorrupt", err)
	}
	if _, err := e.Trim(ctx, order.Retention{MaxCount: 1}); !errors.Is(err, order.ErrCorrupt) {
		t.Errorf("Trim of a string: %v; want order.ErrCorrupt", err)
	}
}

// TestAnImportRefusesAnOrderWhoseStatusIsNoState: an order another writer left with a status
// that is no state is a corrupt record. An import that holds it fails naming it, as a corrupt
// record, and its chunk writes nothing: new data for it would move the version with no event
// (an event of it could not be decoded, and would stop every reader of the log there).
func TestAnImportRefusesAnOrderWhoseStatusIsNoState(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv)
	ctx := context.Background()
	s := eventHarness(rdb).New(t, nil).(*eventStore)
	key := func(k string) string { return "{" + s.prefix + ":orders}:" + k }
	srv.MustDo(t, "HSET", key("status"), "5", "lost")
	state := func() string {
		return fmt.Sprint(rdb.HGetAll(ctx, key("data")).Val(), rdb.HGetAll(ctx, key("status")).Val(),
			rdb.MGet(ctx, key("version"), key("generation")).Val(), rdb.XLen(ctx, key("events")).Val())
	}
	before := state()
	o := ordertest.Fixture()[1]
	o.ID = 5
	_, err := s.Orders.Import(ctx, []order.Order{o, ordertest.Fixture()[2]})
	if !errors.Is(err, order.ErrCorrupt) || !strings.Contains(err.Error(), "order 5:") || !strings.Contains(err.Error(), "lost") {
		t.Errorf("Import = %v; want order.ErrCorrupt naming order 5 and its status", err)
	}
	if after := state(); after != before {
		t.Errorf("the refused import wrote: %s, then %s", before, after)
	}
	if page, err := s.Events(ctx, order.EventQuery{Limit: 10}); err != nil || len(page.Events) != 0 {
		t.Errorf("events = %+v, %v; want none", page, err)
	}
}

// TestTrimOfRecentEventsDoesNotSeek: a trim by age that has nothing old enough to drop never
// seeks the newest event to drop, since in Redis 7.0 that reverse range walks the whole
// stream when every entry is newer than its bound (113 ms for a million events).
func TestTrimOfRecentEventsDoesNotSeek(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv)
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	e, _ := redisstore.NewEvents(rdb, prefix, time.Second)
	for id := range 3 {
		srv.MustDo(t, "XADD", "{"+prefix+":orders}:events", "*", "type", "order.created", "id", strconv.Itoa(id),
			"data", `{"petId":1,"quantity":1,"shipDate":"2026-11-20T00:00:00Z","complete":false}`, "status", "pending")
	}
	if dropped, err := e.Trim(ctx, order.Retention{MaxAge: time.Hour, MaxCount: 10}); err != nil || dropped != 0 {
		t.Fatalf("Trim = %d, %v; want none dropped", dropped, err)
	}
	stats, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil || !strings.Contains(stats, "cmdstat_xinfo") {
		t.Fatalf("INFO commandstats: %v\n%s", err, stats)
	}
	if strings.Contains(stats, "cmdstat_xrevrange") {
		t.Errorf("the trim sought the newest event to drop, with none old enough:\n%s", stats)
	}
}

// TestSnippetsLeaveWhatTheLayoutCallsMissingOrCorrupt: the layout's snippets, run as written
// there, treat an empty value as a missing one and a status that is no state as a corrupt
// record: update and ship change nothing and record nothing there (an event with empty data
// or no state could not be decoded, and every reader of the log would stop at it), and create
// takes an id whose status is empty as new.
func TestSnippetsLeaveWhatTheLayoutCallsMissingOrCorrupt(t *testing.T) {
	rdb := client(t, redistest.Start(t))
	ctx := context.Background()
	o1 := ordertest.Fixture()[1]
	o1.Quantity = 3
	for _, c := range []struct {
		name          string
		field, id, to string // what another writer left: HSET {P:orders}:field id to
		snippet       string
		args          []any
	}{
		{"UpdateOfStatusNoState", "status", "1", "lost", "update", []any{"1", dataJSON(o1)}},
		{"UpdateOfEmptyStatus", "status", "1", "", "update", []any{"1", dataJSON(o1)}},
		{"UpdateOfEmptyData", "data", "1", "", "update", []any{"1", dataJSON(o1)}},
		{"ShipOfEmptyData", "data", "0", "", "ship", []any{"0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := eventHarness(rdb).New(t, ordertest.Fixture()).(*eventStore)
			key := func(k string) string { return "{" + s.prefix + ":orders}:" + k }
			if err := rdb.HSet(ctx, key(c.field), c.id, c.to).Err(); err != nil {
				t.Fatal(err)
			}
			state := func() string {
				var b strings.Builder
				for _, h := range []string{"data", "status"} {
					fmt.Fprintln(&b, rdb.HGetAll(ctx, key(h)).Val())
				}
				fmt.Fprintln(&b, rdb.MGet(ctx, key("version"), key("generation")).Val(), rdb.XLen(ctx, key("events")).Val())
				return b.String()
			}
			before := state()
			src, keys := redistest.Snippet(t, c.snippet, s.prefix)
			if n, err := rdb.Eval(ctx, src, keys, append(c.args, rand.Text())...).Int(); err != nil || n != 0 {
				t.Errorf("snippet %s = %d, %v; want 0", c.snippet, n, err)
			}
			if after := state(); after != before {
				t.Errorf("snippet %s changed\n%s\nto\n%s", c.snippet, before, after)
			}
			if _, err := s.Events(ctx, order.EventQuery{Limit: 100}); err != nil {
				t.Errorf("the log no longer reads: %v", err)
			}
		})
	}

	t.Run("CreateOfEmptyStatus", func(t *testing.T) {
		s := eventHarness(rdb).New(t, ordertest.Fixture()).(*eventStore)
		if err := rdb.HSet(ctx, "{"+s.prefix+":orders}:status", "7", "").Err(); err != nil {
			t.Fatal(err)
		}
		from, err := s.LastEventID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		o := ordertest.Fixture()[1]
		o.ID = 7
		eventHarness(rdb).Create(t, s, o) // fails unless the snippet answers 1
		page, err := s.Events(ctx, order.EventQuery{After: from, Limit: 10})
		if err != nil || len(page.Events) != 1 || page.Events[0].Type != order.EventCreated || page.Events[0].Order != o {
			t.Fatalf("events after the create: %+v, %v; want order 7's order.created", page, err)
		}
		if got, err := ordertest.Fresh(s).Get(ctx, 7); err != nil || got != o {
			t.Errorf("Get(7) = %+v, %v; want %+v", got, err, o)
		}
	})
}

// TestAPositionOfALostHistoryIsExpired: a Redis that lost writes (a failover to a replica
// that had not received them, a restore) answers 410 to a position of them, though new
// writes have since passed it: reading on, the client would keep the lost change and take
// the new history's events for the ones after its own.
func TestAPositionOfALostHistoryIsExpired(t *testing.T) {
	ctx := context.Background()
	rdb := client(t, redistest.Start(t))
	p := redistest.Prefix(t)
	orders := ordersWithPrefix(t, rdb, p)
	events, err := redisstore.NewEvents(rdb, p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var pending []int64
	list, err := ordertest.Fresh(orders).List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range list {
		if o.Status == order.StatusPending {
			pending = append(pending, o.ID)
		}
	}
	if len(pending) < 2 {
		t.Fatalf("the fixture has %d pending orders, want 2", len(pending))
	}
	// What the replica holds: every key of the prefix before the cancel of the first.
	keys, err := rdb.Keys(ctx, "{"+p+":*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys: %v, %v", keys, err)
	}
	held := map[string]string{}
	for _, k := range keys {
		if held[k], err = rdb.Dump(ctx, k).Result(); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := orders.Cancel(ctx, pending[0]); err != nil {
		t.Fatal(err)
	}
	lost, err := events.LastEventID(ctx) // a client read the cancel: its position
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range held {
		if err := rdb.RestoreReplace(ctx, k, 0, v).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// The next event's id must not be the lost one's, which '*' gives within its millisecond.
	ms, _, _ := strings.Cut(lost, "-")
	lostMs, _ := strconv.ParseInt(ms, 10, 64)
	for deadline := time.Now().Add(5 * time.Second); ; {
		now, err := rdb.Time(ctx).Result()
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("Redis's clock did not pass %d ms: %v", lostMs, err)
		}
		if now.UnixMilli() > lostMs {
			break
		}
	}
	if _, _, err := orders.Cancel(ctx, pending[1]); err != nil {
		t.Fatal(err)
	}
	if page, err := events.Events(ctx, order.EventQuery{After: lost, Limit: 10}); !errors.Is(err, order.ErrEventsExpired) {
		t.Fatalf("after %s, a position of the lost history: %d events, %v; want ErrEventsExpired", lost, len(page.Events), err)
	}
	// A position of this history reads on.
	newest, err := events.LastEventID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	page, err := events.Events(ctx, order.EventQuery{After: newest, Limit: 10})
	if err != nil || len(page.Events) != 0 {
		t.Fatalf("after the newest position: %d events, %v", len(page.Events), err)
	}
}
