package sqlitestore

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
		if journal != "wal" || synchronous != 2 || busy != 1500 || schema != len(migrations) {
			t.Fatalf("connection %d: journal_mode=%s synchronous=%d busy_timeout=%d user_version=%d; "+
				"want wal, 2 (FULL), 1500, %d", i, journal, synchronous, busy, schema, len(migrations))
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

// TestFilteredListsReadIndexes: the lists a later version will filter and page by id read
// an index, in id order, with no sort and no scan of the table. A date range cannot come in
// id order from any index: it reads the range from its index and sorts that.
func TestFilteredListsReadIndexes(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "orderd.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const page = "SELECT " + orderColumns + " FROM orders WHERE %s AND id > ? ORDER BY id LIMIT 100"
	for _, c := range []struct{ where, want string }{
		{"status = ?", "SEARCH orders USING INDEX orders_by_status (status=? AND rowid>?)"},
		{"pet_id = ?", "SEARCH orders USING INDEX orders_by_pet (pet_id=? AND rowid>?)"},
		{"ship_date >= ? AND ship_date < ?", "SEARCH orders USING INDEX orders_by_ship_date (ship_date>? AND ship_date<?)\nUSE TEMP B-TREE FOR ORDER BY"},
		{"1 = 1", "SEARCH orders USING INTEGER PRIMARY KEY (rowid>?)"},
	} {
		query := strings.Replace(page, "%s", c.where, 1)
		rows, err := db.sql.Query("EXPLAIN QUERY PLAN "+query, 1, 2, 3)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if got := strings.Join(plan, "\n"); got != c.want {
			t.Errorf("plan of %s:\n%s\nwant\n%s", query, got, c.want)
		}
	}
}
