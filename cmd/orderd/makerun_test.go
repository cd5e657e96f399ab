package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecondMakeRunLeavesTheFirstAlone: a `make run` on the address another one serves
// stops with one line, before it touches the file: the serving instance's demo keys still
// answer, and no new ones are printed.
func TestSecondMakeRunLeavesTheFirstAlone(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "orderd.db") // where `make run` with RUN_DIR=dir keeps its data
	orderdProcess(t, "import", "--db", db, "--orders", "../../testdata/demo/orders.json", "--pets", "../../testdata/demo/pets.json")
	key := firstLine(orderdProcess(t, "keys", "create", "--plan", "free", "--name", "demo-free", "--db", db))
	base, _ := serveProcess(t, "--db", db)

	run := exec.Command("make", "-C", "../..", "--no-print-directory", "run",
		"BIN="+filepath.Join(t.TempDir(), "orderd"), "RUN_DIR="+dir, "ADDR="+strings.TrimPrefix(base, "http://"))
	out, err := run.CombinedOutput()
	if err == nil {
		t.Fatalf("the second make run succeeded:\n%s", out)
	}
	if !strings.Contains(string(out), "make run: "+strings.TrimPrefix(base, "http://")+" is in use") ||
		strings.Contains(string(out), "Demo API keys") {
		t.Fatalf("the second make run said:\n%s", out)
	}
	if status, body := request(t, "GET", base, "/v1/store/orders", key); status != 200 {
		t.Fatalf("the first instance's key after the second make run: %d %s", status, body)
	}
}
