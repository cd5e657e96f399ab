package api

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/order"
)

// TestAppendOrdersEncodesAsTheGeneratedType: the hand-written encoder writes what
// encoding/json writes for the generated gen.Order, for edge values and random ones.
func TestAppendOrdersEncodesAsTheGeneratedType(t *testing.T) {
	zone := time.FixedZone("X", -7*3600)
	orders := []order.Order{
		{ID: 0, PetID: 0, Quantity: 0, ShipDate: time.Time{}, Status: order.StatusPending},
		{ID: math.MaxInt64, PetID: math.MaxInt64 - 1, Quantity: math.MaxInt32, ShipDate: time.Date(2026, 1, 2, 3, 4, 5, 600, zone), Complete: true, Status: order.StatusShipped},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		orders = append(orders, order.Order{
			ID: r.Int64(), PetID: r.Int64(), Quantity: r.Int32(),
			ShipDate: time.Unix(r.Int64N(1<<34), r.Int64N(1e9)), Complete: r.IntN(2) == 1,
			Status: []order.Status{order.StatusPending, order.StatusShipped, order.StatusCancelled}[r.IntN(3)],
		})
	}
	want, err := json.Marshal(toAPIOrders(orders))
	if err != nil {
		t.Fatal(err)
	}
	got := appendOrders(nil, slices.Values(orders))
	if string(got) != string(want)+"\n" {
		t.Fatalf("encodings differ:\n got %.300s\nwant %.300s", got, want)
	}
	if string(appendOrders(nil, slices.Values([]order.Order(nil)))) != "[]\n" {
		t.Fatal("an empty list is not []")
	}
}

// toAPIOrders converts domain orders to the generated type, every field present: what the
// generated 200 response would encode, and so the reference for appendOrders.
func toAPIOrders(orders []order.Order) []gen.Order {
	out := make([]gen.Order, len(orders))
	for i := range orders {
		o := &orders[i]
		out[i] = gen.Order{
			Id:       o.ID,
			PetId:    o.PetID,
			Quantity: o.Quantity,
			ShipDate: o.ShipDate.UTC(),
			Complete: o.Complete,
			Status:   gen.OrderStatus(o.Status),
		}
	}
	return out
}

// BenchmarkEncodeList compares the two ways to make the list's one encoding per version, at
// the sizes of docs/benchmarks.md: appendOrders, and encoding/json of the generated type
// (the conversion included, as the generated response would need it). The figures are in
// docs/benchmarks.md.
func BenchmarkEncodeList(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		orders := benchOrders(n)
		b.Run("appendOrders/"+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				appendOrders(make([]byte, 0, 128*len(orders)+2), slices.Values(orders))
			}
		})
		b.Run("json/"+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(toAPIOrders(orders)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchOrders makes n orders with every field set, ids and dates growing like a store's.
func benchOrders(n int) []order.Order {
	out := make([]order.Order, n)
	ship := time.Date(2026, 11, 20, 8, 30, 0, 123456789, time.UTC)
	statuses := []order.Status{order.StatusPending, order.StatusShipped, order.StatusCancelled}
	for i := range out {
		out[i] = order.Order{
			ID: int64(i), PetID: int64(i) * 7919, Quantity: int32(i % 100),
			ShipDate: ship.Add(time.Duration(i) * time.Minute), Complete: i%2 == 0, Status: statuses[i%3],
		}
	}
	return out
}

// TestPageCacheIsBounded: the page cache holds one snapshot's pages, at most maxCachedPages of
// them and maxCachedBytes of bodies, and a new snapshot drops the old one's.
func TestPageCacheIsBounded(t *testing.T) {
	var c pageCache
	one, two := &order.Snapshot{}, &order.Snapshot{}
	small := newEncoded([]byte("{}"), pageLevel)
	for i := range maxCachedPages + 10 {
		c.put(one, strconv.Itoa(i), small)
		if len(c.pages) > maxCachedPages {
			t.Fatalf("%d pages held", len(c.pages))
		}
	}
	if _, ok := c.get(one, strconv.Itoa(maxCachedPages+9)); !ok {
		t.Fatal("the page put last is not held")
	}
	big := newEncoded(make([]byte, maxCachedBytes/3), pageLevel)
	for i := range 10 {
		c.put(one, "big"+strconv.Itoa(i), big)
		if c.bytes > maxCachedBytes {
			t.Fatalf("%d bytes held", c.bytes)
		}
	}
	c.put(two, "new", small)
	if _, ok := c.get(one, "big9"); ok {
		t.Fatal("a page of an older version is still answered")
	}
	if _, ok := c.get(two, "new"); !ok || len(c.pages) != 1 {
		t.Fatalf("after a new version: %d pages held", len(c.pages))
	}
}

// TestOneListBuildAtATime: requests that find no list of the version they read wait for the
// load and the build under way and take their result: the store loads once, and every
// reader gets the one encoding.
func TestOneListBuildAtATime(t *testing.T) {
	const readers = 8
	s := &blockingStore{readers: readers, allRead: make(chan struct{})}
	c := &Server{orders: order.NewView(s)}
	var wg sync.WaitGroup
	got := make(chan *encoded, readers)
	for range readers {
		wg.Go(func() {
			l, err := c.encodedList(context.Background())
			if err != nil || l.eventID != "7" {
				t.Errorf("get = %+v, %v", l, err)
			}
			got <- l
		})
	}
	wg.Wait()
	close(got)
	first := <-got
	for l := range got {
		if l != first {
			t.Fatal("two encodings of one version")
		}
	}
	if n := s.loads.Load(); n != 1 {
		t.Fatalf("%d loads of one version for %d readers", n, readers)
	}
}

// blockingStore's Load waits until readers have all read the version: every reader has then
// found no snapshot, and is at the load or waiting for it.
type blockingStore struct {
	order.Store
	readers         int32
	versions, loads atomic.Int32
	allRead         chan struct{}
}

func (s *blockingStore) Version(context.Context) (uint64, error) {
	if s.versions.Add(1) == s.readers {
		close(s.allRead)
	}
	return 1, nil
}

func (s *blockingStore) Load(_ context.Context, add func(order.Order)) (order.Mark, error) {
	s.loads.Add(1)
	<-s.allRead
	add(order.Order{ID: 1, Status: order.StatusPending})
	return order.Mark{Position: "7"}, nil
}

func (s *blockingStore) Since(_ context.Context, m order.Mark, _ int) ([]order.Event, order.Mark, bool, error) {
	return nil, m, false, nil
}
