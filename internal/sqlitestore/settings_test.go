package sqlitestore

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order/ordertest"
)

// TestConnectionSettings: every connection of the pool has the settings dsn promises, the
// durability one above all. Several connections are held at once so that more than the
// first is checked.
func TestConnectionSettings(t *testing.T) {
	ctx := context.Background()
	db, err := Open(filepath.Join(t.TempDir(), "orderd.db"), 1500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 3 {
		conn, err := db.sql.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var journal string
		var synchronous, busy, schema int
		for q, dst := range map[string]any{
			"PRAGMA journal_mode": &journal,
			"PRAGMA synchronous":  &synchronous,
			"PRAGMA busy_timeout": &busy,
			"PRAGMA user_version": &schema,
		} {
			if err := conn.QueryRowContext(ctx, q).Scan(dst); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if journal != "wal" || synchronous != 2 || busy != 1500 || schema != schemaVersion {
			t.Fatalf("connection %d: journal_mode=%s synchronous=%d busy_timeout=%d user_version=%d; "+
				"want wal, 2 (FULL), 1500, %d", i, journal, synchronous, busy, schema, schemaVersion)
		}
	}
}

// TestNewerSchemaIsRefused: a file that a later version migrated is not used by this one,
// which does not know what the later steps mean.
func TestNewerSchemaIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orderd.db")
	db, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err := Open(path, 0); err == nil || !strings.Contains(err.Error(), "newer") {
		if db != nil {
			db.Close()
		}
		t.Fatalf("Open of a newer file: %v", err)
	}
}

// TestFileOfSchema1GainsSettings: a file written before the settings table existed gets it
// on open, with its orders, and keeps a secret made in it.
func TestFileOfSchema1GainsSettings(t *testing.T) {
	ctx := context.Background()
	db := openSchema(t, 1, order7)
	if list, err := ordertest.Fresh(NewOrders(db)).List(ctx); err != nil || len(list) != 1 || list[0].ID != 7 {
		t.Fatalf("the orders after migrating: %+v, %v", list, err)
	}
	secret, err := NewSecrets(db).PageTokenSecret(ctx)
	if err != nil || len(secret) < 32 {
		t.Fatalf("the secret in a migrated file: %x, %v", secret, err)
	}
}
