package sqlitestore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/sqlitestore"
)

// The read cache (cache.go) answers Version, Lookup and Get from memory while the wal-index header
// is unchanged. These tests commit through something other than the reading DB — a second
// DB, a raw connection, another process — after the reader's cache has the old answer, and
// require the reader's very next call to see the change: round after round, across WAL
// checkpoints and restarts.

// cacheRounds is how many writes each freshness test makes; each op and checkpoint mode
// comes up several times.
const cacheRounds = 12

// writeFunc commits op ("revoke" a key by name, "cancel" or "import" an order by id, or
// "checkpoint" with a mode) with arg, as another process would, and returns once committed.
type writeFunc func(t *testing.T, op, arg string)

// freshFile is a file with cacheRounds+1 pending orders and as many keys; it returns the
// keys, key i named key-i.
func freshFile(t *testing.T) (path string, keys []string) {
	t.Helper()
	ctx := context.Background()
	path = filepath.Join(t.TempDir(), "orderd.db")
	db, err := sqlitestore.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	orders := make([]order.Order, cacheRounds+1)
	for i := range orders {
		orders[i] = order.Order{ID: int64(i), PetID: 1, Quantity: 1, ShipDate: time.Unix(1.8e9, 0).UTC(), Status: order.StatusPending}
	}
	if _, err := db.Import(ctx, orders, nil); err != nil {
		t.Fatal(err)
	}
	for i := range cacheRounds + 1 {
		k, rec, err := order.NewKey(fmt.Sprintf("key-%d", i), order.Pro, order.Limits{}, time.Unix(1.7e9, 0).UTC())
		if err != nil {
			t.Fatal(err)
		}
		if err := sqlitestore.NewKeys(db).Add(ctx, rec); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	return path, keys
}

// checkFreshness has write commit, round after round, what reader then must see at once.
func checkFreshness(t *testing.T, path string, keys []string, write writeFunc) {
	ctx := context.Background()
	reader := mustOpen(t, path)
	orders, keyStore := sqlitestore.NewOrders(reader), sqlitestore.NewKeys(reader)
	version := func() uint64 {
		t.Helper()
		v, err := orders.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	found := func(i int) bool {
		t.Helper()
		k, err := keyStore.Lookup(ctx, order.HashOf(keys[i]))
		if errors.Is(err, order.ErrKeyNotFound) {
			return false
		}
		if err != nil || k.Name != fmt.Sprintf("key-%d", i) {
			t.Fatalf("lookup of key-%d: %+v, %v", i, k, err)
		}
		return true
	}
	// get reads order id: its status, or "" when there is none.
	get := func(id int64) order.Status {
		t.Helper()
		o, err := ordertest.Fresh(orders).Get(ctx, id)
		if errors.Is(err, order.ErrNotFound) {
			return ""
		}
		if err != nil {
			t.Fatalf("get of order %d: %v", id, err)
		}
		return o.Status
	}
	// warm asks twice, so that the second answer is the cache's if the file did not change.
	warm := func(i int) uint64 {
		t.Helper()
		v := version()
		if again := version(); again != v || !found(i) || !found(i) || !found(cacheRounds) {
			t.Fatalf("round %d: the file changed with no write, or key-%d is gone", i, i)
		}
		return v
	}
	modes := []string{"PASSIVE", "FULL", "RESTART", "TRUNCATE"}
	for i := range cacheRounds {
		// A checkpoint (a restart of the WAL, with RESTART and TRUNCATE) changes no data:
		// the answers stay right, whether from the cache or from the file.
		v := warm(i)
		write(t, "checkpoint", modes[i%len(modes)])
		if got := warm(i); got != v {
			t.Fatalf("round %d: version %d after a %s checkpoint; was %d", i, got, modes[i%len(modes)], v)
		}
		switch i % 3 {
		case 0:
			write(t, "revoke", fmt.Sprintf("key-%d", i))
			if found(i) {
				t.Fatalf("round %d: key-%d found at the first lookup after another process revoked it", i, i)
			}
			if !found(cacheRounds) {
				t.Fatalf("round %d: the key not revoked is gone", i)
			}
		case 1:
			for range 2 { // the second read is the cache's
				if get(int64(i)) != order.StatusPending {
					t.Fatalf("round %d: order %d is not pending before the cancel", i, i)
				}
			}
			write(t, "cancel", strconv.Itoa(i))
			if got := version(); got == v {
				t.Fatalf("round %d: version still %d at the first call after another process's cancel", i, v)
			}
			if got := get(int64(i)); got != order.StatusCancelled {
				t.Fatalf("round %d: order %d read %q at the first read after another process cancelled it", i, i, got)
			}
		case 2:
			id := int64(1000 + i)
			for range 2 { // the second read is the cache's
				if get(id) != "" {
					t.Fatalf("round %d: order %d exists before its import", i, id)
				}
			}
			write(t, "import", strconv.Itoa(1000+i))
			if got := get(id); got != order.StatusPending {
				t.Fatalf("round %d: order %d read %q at the first read after another process imported it", i, id, got)
			}
			if got := version(); got == v {
				t.Fatalf("round %d: version still %d at the first call after another process's import", i, v)
			}
		}
	}
}

// storeWrite commits op through db, this package's API, as `orderd` commands do; a
// checkpoint goes through a raw connection, the package having no call for it.
func storeWrite(ctx context.Context, path string, db *sqlitestore.DB, op, arg string) error {
	switch op {
	case "revoke":
		_, err := sqlitestore.NewKeys(db).Revoke(ctx, arg)
		return err
	case "cancel":
		id, _ := strconv.ParseInt(arg, 10, 64)
		_, changed, err := sqlitestore.NewOrders(db).Cancel(ctx, id)
		if err == nil && !changed {
			err = fmt.Errorf("order %d not changed", id)
		}
		return err
	case "import":
		id, _ := strconv.ParseInt(arg, 10, 64)
		_, err := db.Import(ctx, []order.Order{{ID: id, ShipDate: time.Unix(1.9e9, 0).UTC(), Status: order.StatusPending}}, nil)
		return err
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer raw.Close()
	return rawWrite(ctx, raw, op, arg)
}

// rawWrite commits op in SQL through raw, a connection that knows nothing of the cache.
func rawWrite(ctx context.Context, raw *sql.DB, op, arg string) error {
	var query string
	switch op {
	case "revoke":
		query = "DELETE FROM api_keys WHERE name = ?"
	case "cancel":
		query = "UPDATE orders SET status = 'cancelled' WHERE id = ?"
	case "import":
		query = "INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status) " +
			"VALUES (?, 0, 0, '2030-03-17T17:46:40.000000000Z', 0, 'pending')"
	case "checkpoint":
		var busy, logged, done int
		return raw.QueryRowContext(ctx, "PRAGMA wal_checkpoint("+arg+")").Scan(&busy, &logged, &done)
	default:
		return fmt.Errorf("no op %q", op)
	}
	res, err := raw.ExecContext(ctx, query, arg)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("%s %s: %d rows, %v", op, arg, n, err)
	}
	return nil
}

func TestCacheSeesSecondDB(t *testing.T) {
	path, keys := freshFile(t)
	other := mustOpen(t, path)
	checkFreshness(t, path, keys, func(t *testing.T, op, arg string) {
		if err := storeWrite(context.Background(), path, other, op, arg); err != nil {
			t.Fatal(err)
		}
	})
}

func TestCacheSeesRawConnection(t *testing.T) {
	path, keys := freshFile(t)
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	checkFreshness(t, path, keys, func(t *testing.T, op, arg string) {
		if err := rawWrite(context.Background(), raw, op, arg); err != nil {
			t.Fatal(err)
		}
	})
}

// writeEnv is the write a child process makes (see TestMain): "path op arg".
const writeEnv = "SQLITESTORE_TEST_WRITE"

// writeAndExit is the child: it opens the file, commits one write, closes the file (the
// last connection to close would delete the -shm file) and exits, as an `orderd` command.
func writeAndExit(spec string) {
	fields := strings.Split(spec, "\n")
	path, op, arg := fields[0], fields[1], fields[2]
	ctx := context.Background()
	db, err := sqlitestore.Open(path, 0)
	if err == nil {
		err = errors.Join(storeWrite(ctx, path, db, op, arg), db.Close())
	}
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestCacheSeesOtherProcesses: each write is a process of its own that exits once it has
// committed; the reader's -shm file stays the one it mapped throughout.
func TestCacheSeesOtherProcesses(t *testing.T) {
	path, keys := freshFile(t)
	var shm os.FileInfo
	checkFreshness(t, path, keys, func(t *testing.T, op, arg string) {
		child := exec.Command(os.Args[0], "-test.run=^$")
		child.Env = append(os.Environ(), writeEnv+"="+path+"\n"+op+"\n"+arg)
		if out, err := child.CombinedOutput(); err != nil {
			t.Fatalf("child %s %s: %v\n%s", op, arg, err, out)
		}
		now, err := os.Stat(path + "-shm")
		if err != nil {
			t.Fatal(err)
		}
		if shm != nil && !os.SameFile(shm, now) {
			t.Fatalf("the -shm file was re-created after the child's %s, with the reader open", op)
		}
		shm = now
	})
}

// TestShmDeletedByLastClose is why the DB pins a connection: the last connection to the file
// to close deletes the -shm file, so a process holding none could be left watching a -shm
// that no one writes any more.
func TestShmDeletedByLastClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orderd.db")
	db, err := sqlitestore.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-shm"); err != nil {
		t.Fatalf("no -shm with the file open: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-shm"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the -shm file after the last close: %v; want it deleted", err)
	}
}
