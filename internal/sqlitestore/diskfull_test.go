package sqlitestore_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/sqlitestore"
)

// smallDisk mounts a filesystem of size bytes (tmpfs) in a directory of the test's, for as long
// as the test runs. Mounting needs root, which CI and `make test` on the project's machines
// have; elsewhere the test is skipped, saying so.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small filesystem for a full disk needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount a small tmpfs for the full-disk test (needs root): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fill writes a file in dir until the filesystem has no room left, and returns its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			return path
		}
	}
}

// TestFullDiskIsNotReady: on a real filesystem with no room left, a write fails with a full
// fault (503), the file is not ready (a load balancer stops sending it work it cannot do), and
// it is ready again, by itself, once there is room: Ready's own write then commits.
func TestFullDiskIsNotReady(t *testing.T) {
	ctx := context.Background()
	dir := smallDisk(t, "2m")
	path := filepath.Join(dir, "orderd.db")
	db := mustOpen(t, path)
	if _, err := db.Import(ctx, ordertest.Fixture(), nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Ready(ctx); err != nil {
		t.Fatalf("Ready with room: %v", err)
	}
	filler := fill(t, dir)

	_, err := db.Import(ctx, manyOrders(), nil)
	var f *order.Fault
	if !errors.Is(err, order.ErrUnavailable) || !errors.As(err, &f) || f.Kind != sqlitestore.FaultFull {
		t.Fatalf("Import on a full disk: %v; want ErrUnavailable, a full fault", err)
	}
	if err := db.Ready(ctx); !errors.As(err, &f) || f.Kind != sqlitestore.FaultFull {
		t.Errorf("Ready on a full disk: %v; want the full fault", err)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := db.Ready(ctx); err != nil {
		t.Errorf("Ready once there is room: %v; want ready", err)
	}
	if _, _, err := sqlitestore.NewOrders(db).Cancel(ctx, 1); err != nil {
		t.Errorf("cancel once there is room: %v", err)
	}
}
