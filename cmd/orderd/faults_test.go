package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/sqlitestore/sqlitetest"
)

// serveLogging starts `orderd serve` with args as serveProcess does, and also returns the
// records of its log from "listening" on.
func serveLogging(t *testing.T, args ...string) (string, <-chan map[string]any) {
	t.Helper()
	return startLogging(t, orderdCommand(append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...))
}

// TestFilesReplacedUnderServe: within a second of the SQLite file being replaced (a restore:
// VACUUM INTO a copy, moved over the file) or its -shm deleted, a running server logs an
// error naming what happened, /readyz answers 503 saying it, and no write is acknowledged:
// the server would otherwise go on serving the old file, or overwrite the WAL frames of
// the processes that made a new -shm.
func TestFilesReplacedUnderServe(t *testing.T) {
	for name, c := range map[string]struct {
		kind, public string
		replace      func(t *testing.T, db string)
	}{
		"File": {"replaced", "the database file was replaced or removed", func(t *testing.T, db string) {
			raw, err := sql.Open("sqlite", "file:"+db)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			if _, err := raw.Exec("VACUUM INTO ?", db+".restored"); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(db+".restored", db); err != nil {
				t.Fatal(err)
			}
		}},
		"Shm": {"shm_removed", "the database's -shm file was removed", func(t *testing.T, db string) {
			if err := os.Remove(db + "-shm"); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "orderd.db")
			orderdProcess(t, "import", "--db", db, "--orders", "../../testdata/demo/orders.json")
			key := firstLine(orderdProcess(t, "keys", "create", "--plan", "pro", "--db", db))
			base, logs := serveLogging(t, "--db", db)
			if status, body := request(t, "GET", base, "/readyz", ""); status != 200 {
				t.Fatalf("/readyz before: %d %s", status, body)
			}

			c.replace(t, db)
			replaced := time.Now()
			var line map[string]any
			for line == nil {
				select {
				case rec := <-logs:
					if rec["level"] == "ERROR" {
						line = rec
					}
				case <-time.After(time.Until(replaced.Add(time.Second))):
					t.Fatal("no error logged within a second")
				}
			}
			if line["kind"] != c.kind || !strings.Contains(line["error"].(string), db) {
				t.Errorf("error line %v; want kind %s, naming the file", line, c.kind)
			}
			if status, body := request(t, "GET", base, "/readyz", ""); status != 503 || !strings.Contains(string(body), c.public) {
				t.Errorf("/readyz after: %d %s; want 503 saying %q", status, body, c.public)
			}
			if status, body := request(t, "DELETE", base, "/v1/store/orders/2", key); status != 503 {
				t.Errorf("cancel after: %d %s; want 503", status, body)
			}
		})
	}
}

// TestServeRefusesAReadOnlyFile: SQLite would open it read-only, silently, and the server
// would serve reads while every write (and every v2 find, whose page-token secret the file
// must hold) failed. serve refuses to start instead, saying why, with the exit status of a
// setting that is wrong.
func TestServeRefusesAReadOnlyFile(t *testing.T) {
	db := filepath.Join(t.TempDir(), "orderd.db")
	orderdProcess(t, "import", "--db", db, "--orders", "../../testdata/demo/orders.json")
	sqlitetest.MakeReadOnly(t, db)
	cmd := orderdCommand("serve", "--addr", "127.0.0.1:0", "--db", db)
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "read-only") {
		t.Fatalf("serve on a read-only file: %v, %s; want exit status 2 saying read-only", err, out)
	}
}
