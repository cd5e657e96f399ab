package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/api/apitest"
)

// asOrderdEnv makes the test binary run main instead of the tests (see TestMain), so that a
// test can start orderd as a process of its own, and kill it.
const asOrderdEnv = "ORDERD_TEST_RUN_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asOrderdEnv) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// orderdCommand is orderd with args, as a process.
func orderdCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asOrderdEnv+"=1")
	return cmd
}

// orderdProcess runs orderd with args as a process until it exits, and returns its stdout
// and stderr; the test fails unless it exits 0.
func orderdProcess(t *testing.T, args ...string) (string, string) {
	t.Helper()
	cmd := orderdCommand(args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("orderd %v: %v: %s", args, err, stderr.String())
	}
	return stdout.String(), stderr.String()
}

// serveProcess starts `orderd serve` with args as a process on a free loopback port and
// returns its base URL; the process is killed when the test ends, if it still runs. It stops
// at once on SIGTERM (--shutdown-delay 0) unless args say otherwise.
func serveProcess(t *testing.T, args ...string) (string, *exec.Cmd) {
	t.Helper()
	return startServing(t, orderdCommand(append([]string{"serve", "--addr", "127.0.0.1:0", "--shutdown-delay", "0"}, args...)...))
}

// startServing starts cmd, an `orderd serve` on a free loopback port, as serveProcess does.
func startServing(t *testing.T, cmd *exec.Cmd) (string, *exec.Cmd) {
	t.Helper()
	base, _ := startLogging(t, cmd)
	return base, cmd
}

// startLogging starts cmd as startServing does, and returns its base URL once it listens and
// the records of its log from then on, as it writes them. The records wait in a buffer of
// 1,000; past that, lines nobody reads are dropped, so that the server never blocks on its
// log.
func startLogging(t *testing.T, cmd *exec.Cmd) (string, <-chan map[string]any) {
	t.Helper()
	logs, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := make(chan string, 1)
	records := make(chan map[string]any, 1000)
	go func() {
		defer close(records)
		listening := false
		sc := bufio.NewScanner(logs)
		for sc.Scan() {
			var rec map[string]any
			if json.Unmarshal(sc.Bytes(), &rec) != nil {
				continue
			}
			if !listening && rec["msg"] == "listening" {
				listening = true
				addr <- rec["addr"].(string)
			}
			if listening {
				select {
				case records <- rec:
				default:
				}
			}
		}
		close(addr)
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			t.Fatal("serve exited before listening")
		}
		return "http://" + a, records
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start listening")
	}
	return "", nil
}

// request sends method path with key to base and returns the status and the body.
func request(t *testing.T, method, base, path, key string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, body := apitest.Load(t).Do(t, http.DefaultClient, req)
	return res.StatusCode, body
}

// listed returns the orders base lists, by id.
func listed(t *testing.T, base, key string) map[int64]map[string]any {
	t.Helper()
	status, body := request(t, "GET", base, "/v1/store/orders", key)
	if status != 200 {
		t.Fatalf("list: %d %s", status, body)
	}
	var list []map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&list); err != nil {
		t.Fatal(err)
	}
	byID := map[int64]map[string]any{}
	for _, o := range list {
		id, _ := o["id"].(json.Number).Int64()
		byID[id] = o
	}
	return byID
}

// firstLine is the first line of stdout.
func firstLine(stdout, _ string) string {
	line, _, _ := strings.Cut(stdout, "\n")
	return line
}

// TestCancelSurvivesSIGKILL: a cancel answered 204 is in the file when the server is killed
// at once, without a chance to close it; the next server on the file lists it cancelled.
func TestCancelSurvivesSIGKILL(t *testing.T) {
	db := filepath.Join(t.TempDir(), "orderd.db")
	orderdProcess(t, "import", "--db", db, "--orders", "../../testdata/demo/orders.json")
	key := firstLine(orderdProcess(t, "keys", "create", "--plan", "pro", "--db", db))

	base, server := serveProcess(t, "--db", db)
	if got := listed(t, base, key)[2]["status"]; got != "pending" {
		t.Fatalf("order 2 is %v before the cancel; want pending", got)
	}
	if status, body := request(t, "DELETE", base, "/v1/store/orders/2", key); status != 204 {
		t.Fatalf("cancel: %d %s", status, body)
	}
	if err := server.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	server.Wait()

	base, _ = serveProcess(t, "--db", db)
	if got := listed(t, base, key)[2]["status"]; got != "cancelled" {
		t.Fatalf("order 2 is %v after a SIGKILL and a restart; want cancelled", got)
	}

	// Importing the data again, which says order 2 is pending, changes nothing.
	_, report := orderdProcess(t, "import", "--db", db, "--orders", "../../testdata/demo/orders.json")
	if !strings.Contains(report, "imported 21 orders (0 added, 0 updated)") {
		t.Fatalf("a second import reports %q; want nothing added or updated", report)
	}
	if got := listed(t, base, key)[2]["status"]; got != "cancelled" {
		t.Fatalf("order 2 is %v after a second import; want cancelled still", got)
	}
}

// TestCommandsWhileServing: keys and import, each a process of its own writing the file a
// server serves, count from the server's very next request, with no wait in between.
func TestCommandsWhileServing(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "orderd.db")
	orderdProcess(t, "import", "--db", db, "--orders", "../../testdata/demo/orders.json")
	base, _ := serveProcess(t, "--db", db)

	key := firstLine(orderdProcess(t, "keys", "create", "--plan", "pro", "--name", "late", "--db", db))
	if status, body := request(t, "GET", base, "/v1/store/orders", key); status != 200 {
		t.Fatalf("a key created while serving: %d %s", status, body)
	}
	other := firstLine(orderdProcess(t, "keys", "create", "--plan", "pro", "--db", db))

	orders := filepath.Join(dir, "orders.json")
	os.WriteFile(orders, []byte(`[
		{"id": 2, "petId": 1002, "quantity": 30, "shipDate": "2026-11-03T11:00:00Z", "complete": false, "status": "pending"},
		{"id": 424242, "petId": 7, "quantity": 1, "shipDate": "2027-01-01T00:00:00Z", "complete": false, "status": "pending"}
	]`), 0o600)
	orderdProcess(t, "import", "--db", db, "--orders", orders)
	got := listed(t, base, key)
	if o := got[424242]; o == nil || o["status"] != "pending" {
		t.Fatalf("the imported order: %v", o)
	}
	if q := got[2]["quantity"]; q != json.Number("30") {
		t.Fatalf("order 2's quantity %v after the import; want 30", q)
	}

	orderdProcess(t, "keys", "revoke", "late", "--db", db)
	if status, body := request(t, "GET", base, "/v1/store/orders", key); status != 401 {
		t.Fatalf("a key revoked while serving: %d %s", status, body)
	}
	if status, _ := request(t, "GET", base, "/v1/store/orders", other); status != 200 {
		t.Fatalf("the key not revoked: %d", status)
	}
}

// TestServeSetsGOGC: the process collects at GOGC 400 unless GOGC is in its environment, as
// go_gc_gogc_percent in /metrics shows.
func TestServeSetsGOGC(t *testing.T) {
	gogc := func(t *testing.T, env ...string) string {
		t.Helper()
		db := filepath.Join(t.TempDir(), "o.db")
		orderdProcess(t, "keys", "create", "--plan", "free", "--name", "gc", "--db", db) // makes the file
		cmd := orderdCommand("serve", "--addr", "127.0.0.1:0", "--db", db)
		cmd.Env = slices.DeleteFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, "GOGC=") })
		cmd.Env = append(cmd.Env, env...)
		base, _ := startServing(t, cmd)
		res, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "go_gc_gogc_percent "); ok {
				return v
			}
		}
		t.Fatal("no go_gc_gogc_percent in /metrics")
		return ""
	}
	if g := gogc(t); g != "400" {
		t.Errorf("GOGC unset: go_gc_gogc_percent %s, want 400", g)
	}
	if g := gogc(t, "GOGC=100"); g != "100" {
		t.Errorf("GOGC=100: go_gc_gogc_percent %s, want the operator's 100", g)
	}
}
