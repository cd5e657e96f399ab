// Package sqlitetest damages SQLite files for tests, as a failing disk, stray write or operator would.
package sqlitetest

import (
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // the driver "sqlite"
)

// DamageLeafPage writes garbage over a leaf page of table in the SQLite file at path, which no
// process may have open (the WAL is checkpointed): reads that reach it get SQLITE_CORRUPT.
func DamageLeafPage(tb testing.TB, path, table string) {
	tb.Helper()
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		tb.Fatal(err)
	}
	var page, size int64
	// Not the first leaf: the page of the lowest ids holds what a test reads first.
	err = raw.QueryRow("SELECT pageno, (SELECT page_size FROM pragma_page_size) FROM dbstat "+
		"WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno LIMIT 1 OFFSET 3", table).Scan(&page, &size)
	if err := errors.Join(err, raw.Close()); err != nil {
		tb.Fatalf("%s: no leaf page of %s to damage: %v", path, table, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(strings.Repeat("\xff", int(size))), (page-1)*size); err != nil {
		tb.Fatal(err)
	}
}

// MakeReadOnly makes the file at path read-only for this process: by its mode, or, for root,
// whom modes do not stop, by the immutable attribute (chattr +i), undone when the test ends.
func MakeReadOnly(tb testing.TB, path string) {
	tb.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(path, 0o400); err != nil {
			tb.Fatal(err)
		}
		return
	}
	if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		tb.Skipf("running as root, and chattr +i failed (%v: %s): no way to make a file read-only", err, out)
	}
	tb.Cleanup(func() { exec.Command("chattr", "-i", path).Run() })
}

// DeleteSecret deletes the page-token secret from the file at path, as the sqlite3 shell would.
func DeleteSecret(tb testing.TB, path string) {
	tb.Helper()
	shell, err := sql.Open("sqlite", path)
	if err == nil {
		_, err = shell.Exec("DELETE FROM settings WHERE name = 'page_token_secret'")
		err = errors.Join(err, shell.Close())
	}
	if err != nil {
		tb.Fatal(err)
	}
}
