package sqlitestore_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/sqlitestore"
)

// mustOpen opens the file at path, closed when the test ends.
func mustOpen(tb testing.TB, path string) *sqlitestore.DB {
	tb.Helper()
	db, err := sqlitestore.Open(path, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// newFile returns the path of a new file in the test's temporary directory, with orders.
func newFile(tb testing.TB, orders []order.Order) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "orderd.db")
	if _, err := mustOpen(tb, path).Import(context.Background(), orders, nil); err != nil {
		tb.Fatal(err)
	}
	return path
}

func TestOrdersConformance(t *testing.T) {
	ordertest.Run(t, func(tb testing.TB, orders []order.Order) order.Store {
		return sqlitestore.NewOrders(mustOpen(tb, newFile(tb, orders)))
	})
}

// TestOrdersConformanceAcrossHandles: the suite holds when the store's calls are spread over
// two handles on one file, as over two processes.
func TestOrdersConformanceAcrossHandles(t *testing.T) {
	ordertest.Run(t, func(tb testing.TB, orders []order.Order) order.Store {
		path := newFile(tb, orders)
		return twoHandles{sqlitestore.NewOrders(mustOpen(tb, path)), sqlitestore.NewOrders(mustOpen(tb, path))}
	})
}

// twoHandles writes through one handle and reads through the other.
type twoHandles struct{ writer, reader *sqlitestore.Orders }

func (s twoHandles) Version(ctx context.Context) (uint64, error) { return s.reader.Version(ctx) }
func (s twoHandles) Load(ctx context.Context, add func(order.Order)) (order.Mark, error) {
	return s.reader.Load(ctx, add)
}
func (s twoHandles) Since(ctx context.Context, m order.Mark, limit int) ([]order.Event, order.Mark, bool, error) {
	return s.reader.Since(ctx, m, limit)
}
func (s twoHandles) Cancel(ctx context.Context, id int64) (order.Order, bool, error) {
	return s.writer.Cancel(ctx, id)
}

func TestKeysConformance(t *testing.T) {
	ordertest.RunKeys(t, func(tb testing.TB) ordertest.KeyHarness {
		path := filepath.Join(tb.TempDir(), "orderd.db")
		s := sqlitestore.NewKeys(mustOpen(tb, path))
		return ordertest.KeyHarness{KeyStore: s, Plant: func(tb testing.TB, k order.Key) { plantKey(tb, path, k) }}
	})
}

// plantKey inserts k's row as another program would, without Add's checks (the schema's
// still apply).
func plantKey(tb testing.TB, path string, k order.Key) {
	tb.Helper()
	_, err := rawDB(tb, path).Exec("INSERT INTO api_keys (name, plan, per_minute, per_day, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
		k.Name, string(k.Plan), k.Custom.PerMinute, k.Custom.PerDay, k.Prefix, string(k.Hash), k.CreatedAt.UTC().Format("2006-01-02T15:04:05.000000000Z"))
	if err != nil {
		tb.Fatal(err)
	}
}

func TestPets(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, filepath.Join(t.TempDir(), "orderd.db"))
	rex := order.Pet{ID: math.MaxInt64, Name: "Rex", Status: order.PetSold}
	if _, err := db.Import(ctx, nil, []order.Pet{rex, {ID: 0, Name: "", Status: order.PetAvailable}}); err != nil {
		t.Fatal(err)
	}
	pets := sqlitestore.NewPets(db)
	if p, err := pets.Pet(ctx, math.MaxInt64); err != nil || p != rex {
		t.Fatalf("Pet = %+v, %v; want %+v", p, err, rex)
	}
	if p, err := pets.Pet(ctx, 0); err != nil || p != (order.Pet{ID: 0, Status: order.PetAvailable}) {
		t.Fatalf("Pet(0) = %+v, %v", p, err)
	}
	if _, err := pets.Pet(ctx, math.MaxInt64-1); !errors.Is(err, order.ErrPetNotFound) {
		t.Fatalf("unknown pet: %v, want ErrPetNotFound", err)
	}
	renamed := rex
	renamed.Name, renamed.Status = "Rex II", order.PetPending
	n, err := db.Import(ctx, nil, []order.Pet{renamed})
	if err != nil || n != (sqlitestore.Imported{PetsUpdated: 1}) {
		t.Fatalf("re-import of a changed pet = %+v, %v", n, err)
	}
	if p, _ := pets.Pet(ctx, math.MaxInt64); p != renamed {
		t.Fatalf("Pet after re-import = %+v, want %+v", p, renamed)
	}
}

// TestInt64AndTimeRoundTrip: ids and pet ids that differ only past the 53 bits of a double
// stay apart, and a ship date keeps its instant to the nanosecond whatever its zone.
func TestInt64AndTimeRoundTrip(t *testing.T) {
	ctx := context.Background()
	paris := time.FixedZone("CET", 3600)
	ship := time.Date(2026, 11, 20, 9, 30, 0, 987654321, paris)
	orders := sqlitestore.NewOrders(mustOpen(t, newFile(t, []order.Order{
		{ID: math.MaxInt64, PetID: math.MaxInt64 - 1, Quantity: math.MaxInt32, ShipDate: ship, Status: order.StatusPending},
		{ID: math.MaxInt64 - 1, PetID: math.MaxInt64, ShipDate: ship, Complete: true, Status: order.StatusPending},
	})))
	o, changed, err := orders.Cancel(ctx, math.MaxInt64-1)
	if err != nil || !changed || o.ID != math.MaxInt64-1 || o.PetID != math.MaxInt64 || !o.Complete {
		t.Fatalf("Cancel = %+v, %v, %v", o, changed, err)
	}
	list, err := ordertest.Fresh(orders).List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != math.MaxInt64-1 || list[0].Status != order.StatusCancelled ||
		list[1].ID != math.MaxInt64 || list[1].PetID != math.MaxInt64-1 || list[1].Status != order.StatusPending ||
		list[1].Quantity != math.MaxInt32 {
		t.Fatalf("List = %+v", list)
	}
	if got := list[1].ShipDate; !got.Equal(ship) || got.Location() != time.UTC ||
		got.Format(time.RFC3339Nano) != "2026-11-20T08:30:00.987654321Z" {
		t.Fatalf("shipDate = %v, want %v in UTC", got, ship)
	}
}

func TestImportRefusesBadData(t *testing.T) {
	ship := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	for name, orders := range map[string][]order.Order{
		"duplicate id":   {{ID: 1, ShipDate: ship, Status: order.StatusPending}, {ID: 1, ShipDate: ship, Status: order.StatusShipped}},
		"negative id":    {{ID: -1, ShipDate: ship, Status: order.StatusPending}},
		"unknown status": {{ID: 1, ShipDate: ship, Status: "lost"}},
		"year 10000":     {{ID: 1, ShipDate: ship.AddDate(8000, 0, 0), Status: order.StatusPending}},
	} {
		db := mustOpen(t, filepath.Join(t.TempDir(), "orderd.db"))
		good := order.Order{ID: 7, ShipDate: ship, Status: order.StatusPending}
		if _, err := db.Import(context.Background(), append([]order.Order{good}, orders...), nil); err == nil {
			t.Errorf("%s: Import accepted it", name)
		}
		if list, _ := ordertest.Fresh(sqlitestore.NewOrders(db)).List(context.Background()); len(list) != 0 {
			t.Errorf("%s: the refused import wrote %+v", name, list)
		}
	}
	for name, pets := range map[string][]order.Pet{
		"pet duplicate id":   {{ID: 1, Status: order.PetSold}, {ID: 1, Status: order.PetPending}},
		"pet unknown status": {{ID: 1, Status: "lost"}},
		"pet name too long":  {{ID: 1, Name: strings.Repeat("x", order.MaxPetNameLength+1), Status: order.PetSold}},
	} {
		db := mustOpen(t, filepath.Join(t.TempDir(), "orderd.db"))
		good := order.Pet{ID: 7, Name: "Rex", Status: order.PetSold}
		if _, err := db.Import(context.Background(), nil, append([]order.Pet{good}, pets...)); err == nil {
			t.Errorf("%s: Import accepted it", name)
		}
		if p, err := sqlitestore.NewPets(db).Pet(context.Background(), good.ID); !errors.Is(err, order.ErrPetNotFound) {
			t.Errorf("%s: the refused import wrote %+v (%v)", name, p, err)
		}
	}
}

// TestAnyFileName: the path is the file's name, whatever characters it holds; none is read
// as part of a URI.
func TestAnyFileName(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a?b#c%41 d.db")
	db, err := sqlitestore.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != filepath.Base(path) {
		t.Fatalf("files in the directory: %v, %v; want only %q", entries, err, filepath.Base(path))
	}
}

// TestNewFileIsPrivate: a file Open creates is readable and writable by its owner only, and
// so are the files SQLite makes beside it; a file that exists keeps its permissions.
func TestNewFileIsPrivate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "orders.db")
	db, err := sqlitestore.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s: mode %v, want -rw-------", filepath.Base(p), perm)
		}
	}
	shared := filepath.Join(dir, "shared.db")
	if err := os.WriteFile(shared, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	db2, err := sqlitestore.Open(shared, 0)
	if err != nil {
		t.Fatal(err)
	}
	db2.Close()
	if info, _ := os.Stat(shared); info.Mode().Perm() != 0o640 {
		t.Errorf("an existing file's mode changed to %v", info.Mode().Perm())
	}
}
