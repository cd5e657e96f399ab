package redisstore_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
)

// TestRecordsThatDoNotParseAreCorrupt: an order or a key that another writer left in a form
// the layout does not allow is order.ErrCorrupt, answered 500 and logged, not a plain error
// nor an outage: retrying will not mend it.
func TestRecordsThatDoNotParseAreCorrupt(t *testing.T) {
	ctx := context.Background()
	rdb := client(t, redistest.Start(t))
	wantCorrupt := func(t *testing.T, what string, err error) {
		t.Helper()
		if !errors.Is(err, order.ErrCorrupt) || errors.Is(err, order.ErrUnavailable) {
			t.Errorf("%s: %v; want order.ErrCorrupt", what, err)
		}
	}

	for field, value := range map[string]string{"data": "not json", "status": "lost"} {
		t.Run("Order"+field, func(t *testing.T) {
			p := redistest.Prefix(t)
			s := ordersWithPrefix(t, rdb, p)
			id := pendingID(t, s)
			if err := rdb.HSet(ctx, "{"+p+":orders}:"+field, strconv.FormatInt(id, 10), value).Err(); err != nil {
				t.Fatal(err)
			}
			_, err := ordertest.Fresh(s).List(ctx)
			wantCorrupt(t, "List", err)
			_, _, err = s.Cancel(ctx, id)
			wantCorrupt(t, "Cancel", err)
		})
	}

	t.Run("Key", func(t *testing.T) {
		p := redistest.Prefix(t)
		s, err := redisstore.NewKeys(rdb, p, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		h := order.HashOf("a key another system wrote")
		if err := rdb.HSet(ctx, "{"+p+":keys}:by-hash", string(h), `{"name":`).Err(); err != nil {
			t.Fatal(err)
		}
		_, err = s.Lookup(ctx, h)
		wantCorrupt(t, "Lookup", err)
		_, err = s.List(ctx)
		wantCorrupt(t, "List", err)
		// Revoking a good key reads only what it needs, past the record that does not parse.
		for _, by := range []func(order.Key) string{
			func(k order.Key) string { return k.Name },
			func(k order.Key) string { return k.Prefix },
		} {
			_, good, _ := order.NewKey("good", order.Pro, order.Limits{}, time.Now())
			if err := s.Add(ctx, good); err != nil {
				t.Fatal(err)
			}
			if k, err := s.Revoke(ctx, by(good)); err != nil || k != good {
				t.Fatalf("Revoke(%q) = %+v, %v; want %+v", by(good), k, err, good)
			}
		}
	})

	t.Run("OrderNotInTheLayout", func(t *testing.T) {
		p := redistest.Prefix(t)
		s := ordersWithPrefix(t, rdb, p)
		if err := rdb.HSet(ctx, "{"+p+":orders}:data", "7", `{"petId":1,"quantity":-1}`).Err(); err != nil {
			t.Fatal(err)
		}
		rdb.HSet(ctx, "{"+p+":orders}:status", "7", string(order.StatusPending))
		_, err := ordertest.Fresh(s).List(ctx)
		wantCorrupt(t, "List", err)
	})

	// A status hash of the wrong type is corrupt for every reader, whatever the order asked
	// for: Get of an unknown id too, whose missing data field Redis reports first.
	t.Run("StatusOfWrongType", func(t *testing.T) {
		p := redistest.Prefix(t)
		s := ordersWithPrefix(t, rdb, p)
		id := pendingID(t, s)
		if err := rdb.Set(ctx, "{"+p+":orders}:status", "not a hash", 0).Err(); err != nil {
			t.Fatal(err)
		}
		for _, id := range []int64{id, 4242} {
			_, err := ordertest.Fresh(s).Get(ctx, id)
			wantCorrupt(t, "Get "+strconv.FormatInt(id, 10), err)
		}
		_, err := ordertest.Fresh(s).List(ctx)
		wantCorrupt(t, "List", err)
	})

	// An id is a field in decimal, as FormatInt writes it: "007" would list as order 7, which
	// a cancel of 7 (field "7") would not find; and a status field that is no id, with data or
	// without, cannot be placed among the ids.
	for _, field := range []string{"007", "+7", "x7"} {
		t.Run("IDNotInTheLayout"+field, func(t *testing.T) {
			p := redistest.Prefix(t)
			s := ordersWithPrefix(t, rdb, p)
			if field != "x7" {
				rdb.HSet(ctx, "{"+p+":orders}:data", field, `{"petId":1,"quantity":1,"shipDate":"2026-11-20T00:00:00Z","complete":false}`)
			}
			rdb.HSet(ctx, "{"+p+":orders}:status", field, string(order.StatusPending))
			_, err := ordertest.Fresh(s).List(ctx)
			wantCorrupt(t, "List", err)
		})
	}
}

// TestVersionThatDoesNotParseIsCorrupt: a version counter that is no number, read by a
// request, is a corrupt record, not an outage: no Retry-After will mend it.
func TestVersionThatDoesNotParseIsCorrupt(t *testing.T) {
	ctx := context.Background()
	rdb := client(t, redistest.Start(t))
	p := redistest.Prefix(t)
	s := ordersWithPrefix(t, rdb, p)
	if err := rdb.Set(ctx, "{"+p+":orders}:version", "not a number", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Version(ctx); !errors.Is(err, order.ErrCorrupt) || errors.Is(err, order.ErrUnavailable) {
		t.Fatalf("Version: %v; want order.ErrCorrupt only", err)
	}
}
