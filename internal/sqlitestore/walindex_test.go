//go:build unix

package sqlitestore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
)

// TestWalIndexHeader: what the read cache assumes of SQLite, checked on the SQLite the binary
// is built with: the header is mapped and readable, every commit of any handle changes it,
// and a checkpoint that copies frames without restarting the WAL leaves it alone.
func TestWalIndexHeader(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "orderd.db")
	db, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if db.cache.wal.Load() == nil || db.cache.wal.Load() != other.cache.wal.Load() {
		t.Fatal("the two DBs do not share one mapping of the -shm file")
	}
	header := func() walHeader {
		t.Helper()
		h, ok := db.cache.header()
		if !ok {
			t.Fatalf("header not usable: %v", h)
		}
		return h
	}
	seen := map[walHeader]bool{header(): true}
	for i := range 20 {
		o := order.Order{ID: int64(i), ShipDate: time.Unix(1.8e9, 0).UTC(), Status: order.StatusPending}
		if _, err := other.Import(ctx, []order.Order{o}, nil); err != nil {
			t.Fatal(err)
		}
		h := header()
		if seen[h] {
			t.Fatalf("commit %d: the header %v came back", i, h)
		}
		seen[h] = true
		if _, err := other.sql.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
			t.Fatal(err)
		}
		if got := header(); got != h {
			t.Fatalf("commit %d: a passive checkpoint changed the header", i)
		}
		if _, err := NewOrders(db).Version(ctx); err != nil {
			t.Fatal(err)
		}
		if v := db.cache.version.Load(); v == nil || v.header != h {
			t.Fatalf("commit %d: Version did not keep what it read: %+v", i, v)
		}
	}
}
