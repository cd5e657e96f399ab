package sqlitestore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/sqlitestore"
)

// TestTwoHandlesSeeEachOther: what one handle commits, as another process would, the other
// sees at its very next call, without waiting.
func TestTwoHandlesSeeEachOther(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "orderd.db")
	a, b := mustOpen(t, path), mustOpen(t, path)
	ordersA, ordersB := sqlitestore.NewOrders(a), sqlitestore.NewOrders(b)
	keysA, keysB := sqlitestore.NewKeys(a), sqlitestore.NewKeys(b)

	t.Run("Import", func(t *testing.T) {
		v0, _ := ordersB.Version(ctx)
		if _, err := a.Import(ctx, ordertest.Fixture(), nil); err != nil {
			t.Fatal(err)
		}
		if v, err := ordersB.Version(ctx); err != nil || v == v0 {
			t.Fatalf("B's version after A's import = %d, %v; was %d", v, err, v0)
		}
		if list, err := ordertest.Fresh(ordersB).List(ctx); err != nil || len(list) != len(ordertest.Fixture()) {
			t.Fatalf("B's list after A's import = %+v, %v", list, err)
		}
	})

	t.Run("Cancel", func(t *testing.T) {
		vA, _ := ordersA.Version(ctx)
		if _, changed, err := ordersB.Cancel(ctx, 1); err != nil || !changed {
			t.Fatalf("B's cancel = %v, %v", changed, err)
		}
		if v, err := ordersA.Version(ctx); err != nil || v == vA {
			t.Fatalf("A's version after B's cancel = %d, %v; was %d", v, err, vA)
		}
		list, err := ordertest.Fresh(ordersA).List(ctx)
		if err != nil || list[1].ID != 1 || list[1].Status != order.StatusCancelled {
			t.Fatalf("A's list after B's cancel = %+v, %v", list, err)
		}
		if _, changed, err := ordersA.Cancel(ctx, 1); err != nil || changed {
			t.Fatalf("A's cancel of the order B cancelled = %v, %v; want unchanged", changed, err)
		}
	})

	t.Run("Keys", func(t *testing.T) {
		k, rec, err := order.NewKey("ci", order.Pro, order.Limits{}, time.Date(2026, 11, 23, 10, 0, 0, 1, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		if err := keysA.Add(ctx, rec); err != nil {
			t.Fatal(err)
		}
		if got, err := keysB.Lookup(ctx, order.HashOf(k)); err != nil || got != rec {
			t.Fatalf("B's lookup of A's new key = %+v, %v", got, err)
		}
		if _, err := keysB.Revoke(ctx, rec.Prefix); err != nil {
			t.Fatal(err)
		}
		if _, err := keysA.Lookup(ctx, order.HashOf(k)); !errors.Is(err, order.ErrKeyNotFound) {
			t.Fatalf("A's lookup of the key B revoked: %v, want ErrKeyNotFound", err)
		}
	})
}

// TestConcurrentCancelsThroughTwoHandles: many cancels of one pending order, spread over two
// handles on one file, move it once.
func TestConcurrentCancelsThroughTwoHandles(t *testing.T) {
	ctx := context.Background()
	path := newFile(t, ordertest.Fixture())
	dbs := []*sqlitestore.DB{mustOpen(t, path), mustOpen(t, path)}
	handles := []*sqlitestore.Orders{sqlitestore.NewOrders(dbs[0]), sqlitestore.NewOrders(dbs[1])}
	events := sqlitestore.NewEvents(dbs[1])
	v0, _ := handles[0].Version(ctx)
	e0, _ := events.LastEventID(ctx)
	var changes atomic.Int64
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			o, changed, err := handles[i%2].Cancel(ctx, 1)
			if err != nil || o.Status != order.StatusCancelled {
				t.Errorf("cancel: %+v, %v", o, err)
			}
			if changed {
				changes.Add(1)
			}
		})
	}
	wg.Wait()
	if changes.Load() != 1 {
		t.Fatalf("%d cancels changed the order; want exactly 1", changes.Load())
	}
	page, err := events.Events(ctx, order.EventQuery{After: e0, Limit: 10})
	if v, _ := handles[1].Version(ctx); err != nil || len(page.Events) != 1 || v == v0 {
		t.Fatalf("events after one transition: %+v, %v; version %d from %d", page, err, v, v0)
	}
}

// TestCancelSurvivesReopen: a committed cancel is in the file, not in the handle.
func TestCancelSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	path := newFile(t, ordertest.Fixture())
	db, err := sqlitestore.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, changed, err := sqlitestore.NewOrders(db).Cancel(ctx, 1); err != nil || !changed {
		t.Fatalf("Cancel = %v, %v", changed, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	list, err := ordertest.Fresh(sqlitestore.NewOrders(mustOpen(t, path))).List(ctx)
	if err != nil || list[1].ID != 1 || list[1].Status != order.StatusCancelled {
		t.Fatalf("after reopening: %+v, %v", list, err)
	}
}

// childEnv names the file a child process cancels order 1 in (see TestMain).
const childEnv = "SQLITESTORE_TEST_CANCEL_IN"

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		cancelAndHang(path)
	}
	if spec := os.Getenv(writeEnv); spec != "" {
		writeAndExit(spec)
	}
	os.Exit(m.Run())
}

// cancelAndHang is the child: it cancels order 1, says so, and waits to be killed with the
// file still open.
func cancelAndHang(path string) {
	db, err := sqlitestore.Open(path, 0)
	if err == nil {
		_, _, err = sqlitestore.NewOrders(db).Cancel(context.Background(), 1)
	}
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("cancelled")
	time.Sleep(time.Minute)
	os.Exit(2)
}

// TestCancelSurvivesSIGKILL: a process killed right after its cancel returned, without
// closing the file, leaves the cancel in it.
func TestCancelSurvivesSIGKILL(t *testing.T) {
	path := newFile(t, ordertest.Fixture())
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), childEnv+"="+path)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	child.Process.Kill()
	child.Wait()
	if line != "cancelled\n" {
		t.Fatalf("child said %q", line)
	}
	list, err := ordertest.Fresh(sqlitestore.NewOrders(mustOpen(t, path))).List(context.Background())
	if err != nil || list[1].ID != 1 || list[1].Status != order.StatusCancelled {
		t.Fatalf("after the child was killed: %+v, %v", list, err)
	}
}
