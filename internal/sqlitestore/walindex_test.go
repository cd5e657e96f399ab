//go:build unix

package sqlitestore

import (
	"context"
	"errors"
	"os"
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
	if db.cache.wal == nil || db.cache.wal != other.cache.wal {
		t.Fatal("the two DBs do not share one mapping of the -shm file")
	}
	header := func() walHeader {
		t.Helper()
		h, ok := db.cache.wal.header()
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
		if _, ok := db.cache.found[versionKey{}]; !ok || db.cache.header != h {
			t.Fatalf("commit %d: Version did not keep what it read under %v", i, h)
		}
	}
}

// TestReadCacheSaysWhyItIsOff: a DB whose wal-index is mapped reports the read cache on; a
// -shm file smaller than a memory page (what a 64 KiB page makes of SQLite's 32 KiB
// regions) is refused as unsupported by design, which the service logs at info.
func TestReadCacheSaysWhyItIsOff(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "orderd.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.ReadCache(); err != nil {
		t.Fatalf("read cache off: %v", err)
	}
	small := filepath.Join(t.TempDir(), "small.db")
	if err := os.WriteFile(small+"-shm", make([]byte, os.Getpagesize()/2), 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(small + "-shm")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openWalIndex(small+"-shm", info); !errors.Is(err, ErrReadCacheUnsupported) {
		t.Fatalf("a -shm smaller than a page: %v; want ErrReadCacheUnsupported", err)
	}
}
