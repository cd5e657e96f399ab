package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// TestContractCheckPassesOnTheRealServer runs the check against `orderd serve`.
func TestContractCheckPassesOnTheRealServer(t *testing.T) {
	db := filepath.Join(t.TempDir(), "orderd.db")
	key := createKey(t, db, "--plan", "free")
	importInto(t, db, "--orders", "../../testdata/demo/orders.json")
	base, stop := serveInBackground(t, "--db", db)
	defer stop()
	for _, b := range []string{base, base + "/v1/"} {
		out, errOut, code := orderd(t, nil, "contract-check", "--base", b, "--key", key)
		if code != 0 || !strings.HasSuffix(out, "12 passed, 0 failed\n") || strings.Contains(out, "FAIL") {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		if strings.Count(out, "\n") != 13 {
			t.Fatalf("want one line per check:\n%s", out)
		}
	}
}

// TestContractCheckFailsOnAServerThatBreaksIt: a server that answers plain text fails every
// check, and the exit status is 1.
func TestContractCheckFailsOnAServerThatBreaksIt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusTeapot)
	}))
	defer srv.Close()
	out, _, code := orderd(t, nil, "contract-check", "--base", srv.URL, "--key", "osk_x")
	if code != 1 || !strings.HasSuffix(out, "0 passed, 11 failed\n") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}
