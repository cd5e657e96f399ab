package sqlitestore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/sqlitestore"
	"github.com/petstore/orderd/internal/sqlitestore/sqlitetest"
)

// faultLog collects the faults a DB reports.
type faultLog struct {
	mu     sync.Mutex
	faults []*order.Fault
	// reported, when set, is told of each fault as it is reported (non-blocking: a buffer).
	reported chan struct{}
}

func (l *faultLog) report(f *order.Fault) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.faults = append(l.faults, f)
	if l.reported != nil {
		select {
		case l.reported <- struct{}{}:
		default:
		}
	}
}

func (l *faultLog) kinds() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var kinds []string
	for _, f := range l.faults {
		kinds = append(kinds, f.Kind)
	}
	return kinds
}

// manyOrders are enough orders for the orders table to take many pages.
func manyOrders() []order.Order {
	orders := make([]order.Order, 2000)
	ship := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	for i := range orders {
		orders[i] = order.Order{ID: int64(i + 1), PetID: int64(i % 7), Quantity: 1, ShipDate: ship, Status: order.StatusPending}
	}
	return orders
}

// TestCorruptFileIsCorrupt: a damaged page of the orders table is order.ErrCorrupt, not an
// outage: retrying will not mend it. The error names the file and keeps SQLite's message; the
// fault is reported, and lasts.
func TestCorruptFileIsCorrupt(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "orderd.db")
	db, err := sqlitestore.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Import(ctx, manyOrders(), nil); err != nil {
		t.Fatal(err)
	}
	db.Close()
	sqlitetest.DamageLeafPage(t, path, "orders")

	db = mustOpen(t, path)
	var faults faultLog
	db.OnFault(faults.report)
	if err := db.Fault(); err != nil {
		t.Fatalf("Fault before any read of the damaged page: %v", err)
	}
	_, err = ordertest.Fresh(sqlitestore.NewOrders(db)).List(ctx)
	var f *order.Fault
	if !errors.Is(err, order.ErrCorrupt) || errors.Is(err, order.ErrUnavailable) || !errors.As(err, &f) ||
		f.Kind != sqlitestore.FaultCorrupt || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "malformed") {
		t.Fatalf("List of a file with a damaged page: %v; want ErrCorrupt naming the file and SQLite's message", err)
	}
	if strings.Contains(f.Public, path) {
		t.Errorf("the fault's public text names the file: %q", f.Public)
	}
	if got := faults.kinds(); len(got) != 1 || got[0] != sqlitestore.FaultCorrupt {
		t.Errorf("reported %v; want one corrupt", got)
	}
	if err := db.Fault(); !errors.Is(err, order.ErrCorrupt) {
		t.Errorf("Fault after the damaged page was read: %v; want it to last", err)
	}
}

// TestFullIsUnavailable: a write that finds no room (SQLITE_FULL, here from SQLite's page
// limit) is an outage, reported as a full fault that does not last.
func TestFullIsUnavailable(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, newFile(t, ordertest.Fixture()))
	var faults faultLog
	db.OnFault(faults.report)
	if err := sqlitestore.LimitPages(ctx, db); err != nil {
		t.Fatal(err)
	}
	_, err := db.Import(ctx, manyOrders(), nil)
	var f *order.Fault
	if !errors.Is(err, order.ErrUnavailable) || !errors.As(err, &f) || f.Kind != sqlitestore.FaultFull {
		t.Fatalf("Import past the page limit: %v; want ErrUnavailable, a full fault", err)
	}
	if got := faults.kinds(); len(got) != 1 || got[0] != sqlitestore.FaultFull {
		t.Errorf("reported %v; want one full", got)
	}
	if err := db.Fault(); err != nil {
		t.Errorf("Fault after a full disk: %v; want none (it ends when there is room)", err)
	}
}

// TestReplacedFilesAreFound: within a second of the file being replaced, or its -shm
// removed, the DB reports it once, Fault returns it, and no write is made.
func TestReplacedFilesAreFound(t *testing.T) {
	for name, replace := range map[string]func(t *testing.T, path string){
		"File": func(t *testing.T, path string) {
			// A restore: a copy of the file moved over it.
			copyPath := path + ".restored"
			raw := rawDB(t, path)
			if _, err := raw.Exec("VACUUM INTO ?", copyPath); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(copyPath, path); err != nil {
				t.Fatal(err)
			}
		},
		"Shm": func(t *testing.T, path string) {
			if err := os.Remove(path + "-shm"); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			path := newFile(t, ordertest.Fixture())
			db := mustOpen(t, path)
			faults := faultLog{reported: make(chan struct{}, 1)}
			db.OnFault(faults.report)
			orders := sqlitestore.NewOrders(db)
			if _, _, err := orders.Cancel(ctx, 1); err != nil {
				t.Fatal(err)
			}
			replace(t, path)
			select {
			case <-faults.reported:
			case <-time.After(time.Second):
			}
			want := map[string]string{"File": sqlitestore.FaultReplaced, "Shm": sqlitestore.FaultShmRemoved}[name]
			var f *order.Fault
			if err := db.Fault(); !errors.As(err, &f) || f.Kind != want || !errors.Is(err, order.ErrUnavailable) {
				t.Fatalf("Fault a second after: %v; want %s", err, want)
			}
			if _, _, err := orders.Cancel(ctx, 0); !errors.Is(err, order.ErrUnavailable) {
				t.Errorf("Cancel after: %v; want ErrUnavailable", err)
			}
			if _, err := db.Import(ctx, ordertest.Fixture(), nil); !errors.Is(err, order.ErrUnavailable) {
				t.Errorf("Import after: %v; want ErrUnavailable", err)
			}
			// Closing ends the watcher: what it reported by then is all it ever reports.
			db.Close()
			if got := faults.kinds(); len(got) != 1 || got[0] != want {
				t.Errorf("reported %v; want one %s", got, want)
			}
		})
	}
}

// TestReadOnlyFileIsRefused: SQLite opens a file it cannot write read-only, silently; Open
// refuses it, saying so, since every process on the file writes to it.
func TestReadOnlyFileIsRefused(t *testing.T) {
	path := newFile(t, ordertest.Fixture())
	sqlitetest.MakeReadOnly(t, path)
	db, err := sqlitestore.Open(path, 0)
	if err == nil {
		db.Close()
		t.Fatal("Open of a read-only file succeeded")
	}
	if !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open of a read-only file: %v; want it named read-only", err)
	}
}
