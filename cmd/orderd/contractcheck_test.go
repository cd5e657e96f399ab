package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// TestContractCheckPassesOnTheRealServer runs the check against `orderd serve`: both versions
// from the root, one from its base.
func TestContractCheckPassesOnTheRealServer(t *testing.T) {
	db := filepath.Join(t.TempDir(), "orderd.db")
	key := createKey(t, db, "--plan", "free")
	importInto(t, db, "--orders", "../../testdata/demo/orders.json")
	base, stop := serveInBackground(t, "--db", db)
	defer stop()
	for b, passed := range map[string]int{base: 26, base + "/v1/": 12, base + "/v2": 14} {
		out, errOut, code := orderd(t, nil, "contract-check", "--base", b, "--key", key)
		if code != 0 || !strings.HasSuffix(out, fmt.Sprintf("%d passed, 0 failed\n", passed)) || strings.Contains(out, "FAIL") {
			t.Fatalf("--base %s: exit %d\n%s%s", b, code, out, errOut)
		}
		if strings.Count(out, "\n") != passed+1 {
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
	if code != 1 || !strings.HasSuffix(out, "0 passed, 22 failed\n") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}
