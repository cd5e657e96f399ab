package sqlitestore

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindQueriesReadOneIndexRangeInIDOrder: each find query is a SEARCH of one B-tree
// range (never a SCAN of the table) and needs no sort (no temp B-tree), so its LIMIT bounds
// the rows it reads.
func TestFindQueriesReadOneIndexRangeInIDOrder(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "orderd.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tc := range []struct {
		query string
		args  []any
		want  string
	}{
		{findByPet, []any{int64(7), int64(-1), 1001}, "SEARCH orders USING INDEX orders_by_pet (pet_id=? AND rowid>?)"},
		{findByStatus, []any{"pending", int64(-1), 1001}, "SEARCH orders USING INDEX orders_by_status (status=? AND rowid>?)"},
		{findByID, []any{int64(-1), 1001}, "SEARCH orders USING INTEGER PRIMARY KEY (rowid>?)"},
	} {
		rows, err := db.sql.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+tc.query, tc.args...)
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
		if len(plan) != 1 || plan[0] != tc.want {
			t.Errorf("%s:\nplan %q\nwant [%q]", tc.query, plan, tc.want)
		}
		if all := strings.Join(plan, "\n"); strings.Contains(all, "SCAN") || strings.Contains(all, "TEMP B-TREE") {
			t.Errorf("%s: plan %q scans or sorts", tc.query, plan)
		}
	}
}
