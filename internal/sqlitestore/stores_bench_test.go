package sqlitestore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/sqlitestore"
)

// benchDB is a file with n orders and n keys; it returns the key of the last.
func benchDB(b *testing.B, n int) (*sqlitestore.DB, string) {
	b.Helper()
	ctx := context.Background()
	db := mustOpen(b, filepath.Join(b.TempDir(), "orderd.db"))
	list := make([]order.Order, n)
	for i := range list {
		list[i] = order.Order{ID: int64(i), PetID: int64(i), Quantity: 1, ShipDate: time.Unix(1.8e9, 0), Status: order.StatusShipped}
	}
	if _, err := db.Import(ctx, list, nil); err != nil {
		b.Fatal(err)
	}
	keys := sqlitestore.NewKeys(db)
	var last string
	for i := range n {
		k, rec, err := order.NewKey(fmt.Sprintf("key-%d", i), order.Pro, order.Limits{}, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		if err := keys.Add(ctx, rec); err != nil {
			b.Fatal(err)
		}
		last = k
	}
	return db, last
}

func BenchmarkVersion(b *testing.B) {
	db, _ := benchDB(b, 100)
	s, ctx := sqlitestore.NewOrders(db), b.Context() // cancellable, as a request's is
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Version(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVersionParallel: the requests of a server ask for the version at once; nothing in
// the package makes them wait for each other.
func BenchmarkVersionParallel(b *testing.B) {
	db, _ := benchDB(b, 100)
	s, ctx := sqlitestore.NewOrders(db), b.Context() // cancellable, as a request's is
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Version(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkLookup(b *testing.B) {
	db, key := benchDB(b, 100)
	s, ctx, h := sqlitestore.NewKeys(db), b.Context(), order.HashOf(key)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Lookup(ctx, h); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLookupParallel(b *testing.B) {
	db, key := benchDB(b, 100)
	s, ctx, h := sqlitestore.NewKeys(db), b.Context(), order.HashOf(key)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Lookup(ctx, h); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkOrdersList100(b *testing.B) {
	db, _ := benchDB(b, 100)
	s, ctx := sqlitestore.NewOrders(db), b.Context() // cancellable, as a request's is
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ordertest.Fresh(s).List(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOrdersCancelShipped is a refused cancel: a write transaction that writes nothing.
func BenchmarkOrdersCancelShipped(b *testing.B) {
	db, _ := benchDB(b, 100)
	s, ctx := sqlitestore.NewOrders(db), b.Context() // cancellable, as a request's is
	b.ReportAllocs()
	for b.Loop() {
		s.Cancel(ctx, 50)
	}
}

// BenchmarkOrdersCancel is a cancel that commits, fsync included (synchronous=FULL), on the
// file system of the test's temporary directory.
func BenchmarkOrdersCancel(b *testing.B) {
	ctx := context.Background()
	db := mustOpen(b, filepath.Join(b.TempDir(), "orderd.db"))
	const n = 100_000
	list := make([]order.Order, n)
	for i := range list {
		list[i] = order.Order{ID: int64(i), ShipDate: time.Unix(1.8e9, 0), Status: order.StatusPending}
	}
	if _, err := db.Import(ctx, list, nil); err != nil {
		b.Fatal(err)
	}
	s := sqlitestore.NewOrders(db)
	b.ReportAllocs()
	i := int64(0)
	for b.Loop() {
		if _, changed, err := s.Cancel(ctx, i%n); err != nil || (i < n && !changed) {
			b.Fatal(changed, err)
		}
		i++
	}
}
