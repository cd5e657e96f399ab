package sqlitestore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/sqlitestore"
)

// calls makes one call of every store method on db.
func calls(ctx context.Context, db *sqlitestore.DB) map[string]error {
	orders, pets, keys := sqlitestore.NewOrders(db), sqlitestore.NewPets(db), sqlitestore.NewKeys(db)
	_, rec, _ := order.NewKey("new", order.Free, order.Limits{}, time.Now())
	errs := map[string]error{}
	_, errs["Orders.List"] = ordertest.Fresh(orders).List(ctx)
	_, errs["Orders.Version"] = orders.Version(ctx)
	_, _, errs["Orders.Cancel"] = orders.Cancel(ctx, 1)
	_, errs["Import"] = db.Import(ctx, ordertest.Fixture(), nil)
	_, errs["Pets.Pet"] = pets.Pet(ctx, 1)
	_, errs["Keys.Lookup"] = keys.Lookup(ctx, order.HashOf("osk_x"))
	errs["Keys.Add"] = keys.Add(ctx, rec)
	_, errs["Keys.List"] = keys.List(ctx)
	_, errs["Keys.Revoke"] = keys.Revoke(ctx, "new")
	return errs
}

func TestClosedDBIsUnavailable(t *testing.T) {
	db, err := sqlitestore.Open(newFile(t, ordertest.Fixture()), 0)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	for op, err := range calls(context.Background(), db) {
		if !errors.Is(err, order.ErrUnavailable) {
			t.Errorf("%s after Close: %v, want ErrUnavailable", op, err)
		}
	}
}

func TestCancelledContextIsReturnedAsIs(t *testing.T) {
	db := mustOpen(t, newFile(t, ordertest.Fixture()))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for op, err := range calls(ctx, db) {
		if !errors.Is(err, context.Canceled) || errors.Is(err, order.ErrUnavailable) {
			t.Errorf("%s with a cancelled context: %v, want context.Canceled only", op, err)
		}
	}
}

// TestCannotOpenIsUnavailable: a file that cannot be opened is an outage; one that is no
// database is corrupt.
func TestCannotOpenIsUnavailable(t *testing.T) {
	dir := t.TempDir()
	notADB := filepath.Join(dir, "not.db")
	if err := os.WriteFile(notADB, []byte(strings.Repeat("not a database file ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]error{filepath.Join(dir, "missing", "orderd.db"): order.ErrUnavailable, notADB: order.ErrCorrupt} {
		if db, err := sqlitestore.Open(path, 0); !errors.Is(err, want) {
			if db != nil {
				db.Close()
			}
			t.Errorf("Open(%s) = %v, want %v", path, err, want)
		}
	}
}

// TestFailedOpenLeavesNothingOpen: an Open that fails after it pinned a connection (here on
// reading the version row, which another program deleted) keeps no descriptor of the file.
func TestFailedOpenLeavesNothingOpen(t *testing.T) {
	if _, err := os.ReadDir("/proc/self/fd"); err != nil {
		t.Skipf("no /proc/self/fd to list the open files: %v", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "orderd.db")
	db, err := sqlitestore.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw := rawDB(t, path)
	if _, err := raw.Exec("DELETE FROM orders_version"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if db, err := sqlitestore.Open(path, 0); err == nil {
		db.Close()
		t.Fatal("Open of a file without its version row succeeded")
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if target, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); strings.HasPrefix(target, dir+string(filepath.Separator)) {
			t.Errorf("descriptor %s of %s is open after the failed Open", fd.Name(), target)
		}
	}
}

// rawDB opens path without the package, as another program would; with
// ignore_check_constraints it can write rows the schema refuses.
func rawDB(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=ignore_check_constraints(1)")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { raw.Close() })
	return raw
}

// TestWriteLockHeldPastTimeoutIsUnavailable: a write that waits longer than the busy timeout
// for another process's transaction fails with ErrUnavailable, while reads go on.
func TestWriteLockHeldPastTimeoutIsUnavailable(t *testing.T) {
	ctx := context.Background()
	path := newFile(t, ordertest.Fixture())
	db, err := sqlitestore.Open(path, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := rawDB(t, path).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, "ROLLBACK")
	orders := sqlitestore.NewOrders(db)
	if _, _, err := orders.Cancel(ctx, 1); !errors.Is(err, order.ErrUnavailable) {
		t.Fatalf("Cancel while another process writes: %v, want ErrUnavailable", err)
	}
	if list, err := ordertest.Fresh(orders).List(ctx); err != nil || len(list) != len(ordertest.Fixture()) {
		t.Fatalf("List while another process writes: %d orders, %v", len(list), err)
	}
}

// TestCorruptRowsNameTheRecord: rows written by another program in a form the service
// cannot use are ErrCorrupt, and the error says which.
func TestCorruptRowsNameTheRecord(t *testing.T) {
	ctx := context.Background()
	path := newFile(t, ordertest.Fixture())
	db := mustOpen(t, path)
	k, rec, _ := order.NewKey("ops", order.Pro, order.Limits{}, time.Now())
	if err := sqlitestore.NewKeys(db).Add(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Import(ctx, nil, []order.Pet{{ID: 5, Name: "Rex", Status: order.PetSold}}); err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, path)
	for _, q := range []string{
		"UPDATE orders SET status = 'lost' WHERE id = 1",
		"UPDATE orders SET ship_date = 'soon' WHERE id = 2",
		"UPDATE pets SET status = 'dead' WHERE id = 5",
		"UPDATE api_keys SET plan = 'gold' WHERE name = 'ops'",
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	orders := sqlitestore.NewOrders(db)
	_, listErr := ordertest.Fresh(orders).List(ctx)
	_, _, cancel1Err := orders.Cancel(ctx, 1)
	_, _, cancel2Err := orders.Cancel(ctx, 2)
	_, petErr := sqlitestore.NewPets(db).Pet(ctx, 5)
	_, lookupErr := sqlitestore.NewKeys(db).Lookup(ctx, order.HashOf(k))
	_, keysErr := sqlitestore.NewKeys(db).List(ctx)
	for _, c := range []struct {
		op   string
		err  error
		name string
	}{
		{"Orders.List", listErr, "order 1"},
		{"Orders.Cancel(1)", cancel1Err, "order 1"},
		{"Orders.Cancel(2)", cancel2Err, "order 2"},
		{"Pets.Pet", petErr, "pet 5"},
		{"Keys.Lookup", lookupErr, `key "ops"`},
		{"Keys.List", keysErr, `key "ops"`},
	} {
		if !errors.Is(c.err, order.ErrCorrupt) || !strings.Contains(c.err.Error(), c.name) {
			t.Errorf("%s: %v, want ErrCorrupt naming %s", c.op, c.err, c.name)
		}
	}
}

// TestSchemaRefusesBadRows: the CHECK constraints stop a program that does not validate
// (here, plain SQL) from writing what the service cannot read.
func TestSchemaRefusesBadRows(t *testing.T) {
	path := newFile(t, ordertest.Fixture())
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range []string{
		"UPDATE orders SET status = 'lost' WHERE id = 1",
		"UPDATE orders SET quantity = 2147483648 WHERE id = 1",
		"UPDATE orders SET quantity = 'two' WHERE id = 1",
		"UPDATE orders SET ship_date = '2026-11-20T08:30:00Z' WHERE id = 1",
		"UPDATE orders SET complete = 2 WHERE id = 1",
		"INSERT INTO orders VALUES (-1, 0, 0, '2026-11-20T08:30:00.000000000Z', 0, 'pending')",
		"INSERT INTO pets VALUES (1, 'Rex', 'lost')",
		"INSERT INTO api_keys VALUES ('x', 'gold', 0, 0, 'osk_abcdef', '" + strings.Repeat("a", 64) + "', '2026-11-20T08:30:00.000000000Z')",
		"INSERT INTO api_keys VALUES ('x', 'free', 0, 0, 'osk_abcdef', 'ABC', '2026-11-20T08:30:00.000000000Z')",
	} {
		if _, err := raw.Exec(q); err == nil {
			t.Errorf("the schema accepted: %s", q)
		}
	}
}

// TestWritersOfOneProcessTakeTurns: this process's writers wait for each other however long
// it takes; only another process's lock is bounded by the busy timeout.
func TestWritersOfOneProcessTakeTurns(t *testing.T) {
	ctx := context.Background()
	db, err := sqlitestore.Open(newFile(t, ordertest.Fixture()), time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	keys := sqlitestore.NewKeys(db)
	errs := make(chan error, 64)
	for i := range cap(errs) {
		go func() {
			_, k, err := order.NewKey(fmt.Sprintf("writer-%d", i), order.Free, order.Limits{}, time.Now())
			if err == nil {
				err = keys.Add(ctx, k)
			}
			errs <- err
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Errorf("a write beside this process's others: %v", err)
		}
	}
}
