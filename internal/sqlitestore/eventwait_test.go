package sqlitestore

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
)

// TestWaitForEventsWithoutTheHeader: where the wal-index is not mapped, a wait queries on its
// own clock and still returns on the next change, and only on it.
func TestWaitForEventsWithoutTheHeader(t *testing.T) {
	ctx := context.Background()
	db, err := Open(filepath.Join(t.TempDir(), "orderd.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	wal := db.cache.wal
	db.cache.wal = nil
	defer func() { db.cache.wal = wal }() // for Close to release it
	ship := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	if _, err := db.Import(ctx, []order.Order{{ID: 1, ShipDate: ship, Status: order.StatusPending}}, nil); err != nil {
		t.Fatal(err)
	}
	events := NewEvents(db)
	from, err := events.LastEventID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	quick, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := events.WaitForEvents(quick, from); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitForEvents with nothing new = %v, want the deadline", err)
	}
	waited := make(chan error, 1)
	waitCtx, stop := context.WithTimeout(ctx, 10*time.Second)
	defer stop()
	go func() { waited <- events.WaitForEvents(waitCtx, from) }()
	if _, _, err := NewOrders(db).Cancel(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatalf("WaitForEvents after a cancel = %v", err)
	}
}
