package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/order"
)

// orderd runs the program as main would, with env as its environment.
func orderd(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut)
	code = exitCode(err, &errOut)
	return out.String(), errOut.String(), code
}

func createKey(t *testing.T, db string, args ...string) string {
	t.Helper()
	out, errOut, code := orderd(t, nil, append([]string{"keys", "create", "--db", db}, args...)...)
	if code != 0 {
		t.Fatalf("keys create: exit %d: %s", code, errOut)
	}
	key := strings.TrimSuffix(out, "\n")
	if strings.ContainsAny(key, " \n\t") || !strings.HasPrefix(key, "osk_") {
		t.Fatalf("keys create printed %q; want the key alone", out)
	}
	return key
}

// importInto runs `orderd import --db db` with args, and fails the test if it fails.
func importInto(t *testing.T, db string, args ...string) {
	t.Helper()
	if _, errOut, code := orderd(t, nil, append([]string{"import", "--db", db}, args...)...); code != 0 {
		t.Fatalf("import: exit %d: %s", code, errOut)
	}
}

// serveInBackground starts `orderd serve` on a free loopback port and returns its base URL
// and a function that stops it (as SIGTERM would, with --shutdown-delay 0 unless args say
// otherwise) and returns run's error.
func serveInBackground(t *testing.T, args ...string) (string, func() error) {
	t.Helper()
	base, stop, _ := serveLogged(t, args...)
	return base, stop
}

// serveLogged is serveInBackground that also returns the lines serve logs: logs waits for
// serve to have stopped.
func serveLogged(t *testing.T, args ...string) (base string, stop func() error, logs func() [][]byte) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logR, logW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--shutdown-delay", "0"}, args...), func(string) string { return "" }, io.Discard, logW)
		logW.Close()
		done <- err
	}()
	addr := make(chan string, 1)
	var lines [][]byte
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(logR)
		for sc.Scan() {
			lines = append(lines, bytes.Clone(sc.Bytes()))
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
				addr <- line.Addr
			}
		}
		close(addr)
	}()
	stop = func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("serve did not stop")
			return nil
		}
	}
	logs = func() [][]byte {
		<-scanned
		return lines
	}
	select {
	case a, ok := <-addr:
		if !ok {
			t.Fatalf("serve stopped before listening: %v", <-done)
		}
		return "http://" + a, stop, logs
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start listening")
	}
	return "", stop, logs
}

func TestServeEndToEnd(t *testing.T) {
	db := filepath.Join(t.TempDir(), "orderd.db")
	key := createKey(t, db, "--plan", "free", "--name", "e2e")
	importInto(t, db, "--orders", "../../testdata/demo/orders.json", "--pets", "../../testdata/demo/pets.json")
	base, stop := serveInBackground(t, "--db", db)

	contract := apitest.Load(t)
	do := func(method, path, key string) (*http.Response, []byte) {
		req, _ := http.NewRequest(method, base+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		return contract.Do(t, http.DefaultClient, req)
	}
	if res, body := do("GET", "/v1/store/orders", key); res.StatusCode != 200 || !bytes.Contains(body, []byte(`"id":9223372036854775807`)) {
		t.Fatalf("list: %d %s", res.StatusCode, body)
	}
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"DELETE", "/v1/store/orders/2", 204},
		{"DELETE", "/v1/store/orders/2", 204},
		{"DELETE", "/v1/store/orders/1", 409},
		{"DELETE", "/v1/store/orders/999", 404},
		{"DELETE", "/v1/store/orders/9223372036854775807", 204},
		{"GET", "/v1/pets/1000", 200},
	} {
		if res, body := do(tc.method, tc.path, key); res.StatusCode != tc.status {
			t.Errorf("%s %s: %d %s, want %d", tc.method, tc.path, res.StatusCode, body, tc.status)
		}
	}
	if res, _ := do("GET", "/v1/store/orders", ""); res.StatusCode != 401 {
		t.Errorf("no key: %d", res.StatusCode)
	}

	// A key created while the server runs works at the next request; a revoked one stops.
	late := createKey(t, db, "--plan", "pro", "--name", "late")
	if res, body := do("GET", "/v1/store/orders", late); res.StatusCode != 200 {
		t.Fatalf("a key created while serving: %d %s", res.StatusCode, body)
	}
	if _, errOut, code := orderd(t, nil, "keys", "revoke", "late", "--db", db); code != 0 {
		t.Fatalf("revoke: %s", errOut)
	}
	if res, body := do("GET", "/v1/store/orders", late); res.StatusCode != 401 {
		t.Fatalf("a key revoked while serving: %d %s", res.StatusCode, body)
	}

	if err := stop(); err != nil {
		t.Fatalf("serve returned %v after a clean shutdown", err)
	}
}

func TestKeysCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "orderd.db")
	key := createKey(t, db, "--plan", "enterprise", "--per-minute", "5", "--per-day", "50", "--name", "big")
	createKey(t, db, "--plan", "free")

	out, _, code := orderd(t, nil, "keys", "list", "--db", db)
	if code != 0 || !strings.Contains(out, "big") || !strings.Contains(out, "enterprise") || !strings.Contains(out, key[:10]) {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	if strings.Contains(out, key) || strings.Contains(out, key[10:]) || fileContains(t, db, key) {
		t.Fatal("the key itself appears in the listing or the file")
	}
	if hash := string(order.HashOf(key)); strings.Contains(out, hash) || !fileContains(t, db, hash) {
		t.Fatal("the listing shows a hash, or the file does not hold it")
	}
	if _, _, code := orderd(t, nil, "keys", "revoke", key[:10], "--db", db); code != 0 {
		t.Fatal("revoke by prefix failed")
	}
	if out, _, _ := orderd(t, nil, "keys", "list", "--db", db); strings.Contains(out, "big") {
		t.Fatalf("revoked key still listed:\n%s", out)
	}
	// A name that starts with a dash is an argument after "--", which ends the flags.
	createKey(t, db, "--plan", "free", "--name=-dash")
	if out, errOut, code := orderd(t, nil, "keys", "revoke", "--db", db, "--", "-dash"); code != 0 || !strings.Contains(out, `"-dash"`) {
		t.Fatalf("revoke after --: exit %d: %s%s", code, out, errOut)
	}
	// The file named by the environment, when no flag names one.
	if out, _, code := orderd(t, map[string]string{"ORDERD_DB": db}, "keys", "list"); code != 0 || !strings.Contains(out, "key-") {
		t.Fatalf("ORDERD_DB: exit %d\n%s", code, out)
	}
}

// TestKeysStoredUnderOldNames: a key named before the rules on names (here with a line break
// that fakes a row, as another program or an earlier version could store it) is listed on one
// row, its name quoted, and revoked by that name.
func TestKeysStoredUnderOldNames(t *testing.T) {
	db := filepath.Join(t.TempDir(), "orderd.db")
	createKey(t, db, "--plan", "free", "--name", "ops")
	const name = "old\nfake  enterprise  1  1  osk_Ku2xWs"
	_, k, err := order.NewKey(name, order.Pro, order.Limits{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec("INSERT INTO api_keys (name, plan, per_minute, per_day, prefix, hash, created_at) VALUES (?, 'pro', 0, 0, ?, ?, '2026-11-23T10:00:00.000000000Z')",
		k.Name, k.Prefix, string(k.Hash)); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := orderd(t, nil, "keys", "list", "--db", db)
	if lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[1], `"old\nfake`) {
		t.Fatalf("list: exit %d, %d lines; want a header and a row per key, the old name quoted:\n%s%s", code, len(lines), out, errOut)
	}
	if out, errOut, code := orderd(t, nil, "keys", "revoke", name, "--db", db); code != 0 || !strings.Contains(out, k.Prefix) {
		t.Fatalf("revoke by the old name: exit %d: %s%s", code, out, errOut)
	}
}

// fileContains reports whether the SQLite file at path, or its write-ahead log, holds s.
func fileContains(t *testing.T, path, s string) bool {
	t.Helper()
	for _, p := range []string{path, path + "-wal"} {
		data, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(s)) {
			return true
		}
	}
	return false
}

func TestUsageErrorsExit2InOneLine(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "orderd.db")
	createKey(t, db, "--plan", "free")
	createKey(t, db, "--plan", "free", "--name", "ops")
	badOrders := filepath.Join(dir, "orders.json")
	const rest = `"petId": 1, "quantity": 1, "shipDate": "2026-11-20T08:30:00Z", "complete": false`
	os.WriteFile(badOrders, []byte("[\n  {\"id\": 1, "+rest+", \"status\": \"pending\"},\n  {\"id\": 2, "+rest+", \"status\": \"lost\"}\n]\n"), 0o600)
	dupOrders := filepath.Join(dir, "dup.json")
	os.WriteFile(dupOrders, []byte("[\n{\"id\": 1, "+rest+", \"status\": \"pending\"},\n{\"id\": 1, "+rest+", \"status\": \"shipped\"}\n]"), 0o600)
	badPets := filepath.Join(dir, "pets.json")
	os.WriteFile(badPets, []byte(`[{"id": 1, "name": "Rex"`), 0o600)
	notSQLite := filepath.Join(dir, "notsqlite.db")
	os.WriteFile(notSQLite, []byte(strings.Repeat("not a database ", 20)), 0o600)
	demo := "../../testdata/demo/orders.json"

	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no command", nil, nil, "no command"},
		{"unknown command", nil, []string{"fly"}, "unknown command"},
		{"unknown flag", nil, []string{"serve", "--bogus"}, "bogus"},
		{"keys file is gone", nil, []string{"serve", "--db", db, "--keys-file", "keys.json"}, "-keys-file"},
		{"serve orders is gone", nil, []string{"serve", "--db", db, "--orders", demo}, "-orders"},
		{"bad duration", nil, []string{"serve", "--db", db, "--shutdown-timeout", "soon"}, "shutdown-timeout"},
		{"bad env value", map[string]string{"ORDERD_SHUTDOWN_TIMEOUT": "soon"}, []string{"serve", "--db", db}, "ORDERD_SHUTDOWN_TIMEOUT"},
		{"missing db", nil, []string{"serve", "--db", filepath.Join(dir, "none.db")}, "none.db: no such file"},
		{"missing db from the environment", map[string]string{"ORDERD_DB": filepath.Join(dir, "none.db")}, []string{"keys", "list"}, "none.db: no such file"},
		{"db in a missing directory", nil, []string{"keys", "create", "--plan", "free", "--db", filepath.Join(dir, "none", "orderd.db")}, "does not exist"},
		{"db is a directory", nil, []string{"serve", "--db", dir}, "is a directory"},
		{"db is not SQLite", nil, []string{"keys", "list", "--db", notSQLite}, "notsqlite.db"},
		{"import without orders", nil, []string{"import", "--db", db}, "--orders is required"},
		{"bad order", nil, []string{"import", "--db", db, "--orders", badOrders}, "orders.json:3:3: order 2: status: \"lost\""},
		{"duplicate order", nil, []string{"import", "--db", db, "--orders", dupOrders}, "dup.json:3:1: order 1: duplicate id"},
		{"missing orders file", nil, []string{"import", "--db", db, "--orders", filepath.Join(dir, "none.json")}, "none.json"},
		{"bad pets file", nil, []string{"import", "--db", db, "--orders", demo, "--pets", badPets}, "pets.json:1:"},
		{"sunset before deprecation", nil, []string{"serve", "--db", db, "--pets-sunset-at", "2020-01-01"}, "pets-sunset-at"},
		{"bad trusted proxy", nil, []string{"serve", "--db", db, "--trusted-proxies", "10.0.0.0/8,proxy.local"}, "proxy.local"},
		{"CORS for any origin", nil, []string{"serve", "--db", db, "--cors-allow-origins", "*"}, "API keys"},
		{"CORS origin with a path", nil, []string{"serve", "--db", db, "--cors-allow-origins", "https://a.example,https://shop.example/app"}, "shop.example/app"},
		{"CORS for any origin from the environment", map[string]string{"ORDERD_CORS_ALLOW_ORIGINS": "*"}, []string{"serve", "--db", db}, "ORDERD_CORS_ALLOW_ORIGINS"},
		{"negative ban-after", nil, []string{"serve", "--db", db, "--ban-after", "-1"}, "--ban-after"},
		{"bad sunset date", nil, []string{"serve", "--db", db, "--pets-sunset-at", "July"}, "pets-sunset-at"},
		{"unknown plan", nil, []string{"keys", "create", "--plan", "gold", "--db", db}, "gold"},
		{"enterprise without limits", nil, []string{"keys", "create", "--plan", "enterprise", "--db", db}, "enterprise"},
		{"per-day above the cap", nil, []string{"keys", "create", "--plan", "enterprise", "--per-minute", "5", "--per-day", "9223372036854775807", "--db", db}, "999,999,999,999,999"},
		{"per-minute above the cap", nil, []string{"keys", "create", "--plan", "enterprise", "--per-minute", "1000000000000000", "--per-day", "1000000000000000", "--db", db}, "999,999,999,999,999"},
		{"limits on a fixed plan", nil, []string{"keys", "create", "--plan", "pro", "--per-day", "5", "--db", db}, "enterprise only"},
		{"revoke unknown", nil, []string{"keys", "revoke", "nobody", "--db", db}, "nobody"},
		{"name taken", nil, []string{"keys", "create", "--plan", "free", "--name", "ops", "--db", db}, "ops"},
		{"name like a prefix", nil, []string{"keys", "create", "--plan", "free", "--name", "osk_Ku2xWs", "--db", db}, "osk_Ku2xWs"},
		{"name with a line break", nil, []string{"keys", "create", "--plan", "free", "--name", "ops\nfaked 1 2 osk_Ku2xWs", "--db", db}, `"ops\nfaked`},
		{"name too long", nil, []string{"keys", "create", "--plan", "free", "--name", strings.Repeat("n", 101), "--db", db}, "100 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := orderd(t, tc.env, tc.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", code, errOut)
			}
			last := strings.TrimSuffix(errOut, "\n")
			if i := strings.LastIndex(last, "\n"); i >= 0 {
				last = last[i+1:]
			}
			if !strings.HasPrefix(last, "orderd: ") || !strings.Contains(last, tc.want) {
				t.Fatalf("last line of stderr %q, want one line naming %q", last, tc.want)
			}
			if out != "" && tc.args != nil && tc.args[0] == "keys" {
				t.Fatalf("stdout %q on failure", out)
			}
		})
	}
}

func TestFlagWinsOverEnvironment(t *testing.T) {
	db := filepath.Join(t.TempDir(), "orderd.db")
	env := map[string]string{"ORDERD_DB": filepath.Join(t.TempDir(), "other.db")}
	out, _, code := orderd(t, env, "keys", "create", "--plan", "free", "--db", db)
	if code != 0 || out == "" {
		t.Fatal("create failed")
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("the flag's file was not written: %v", err)
	}
	if _, err := os.Stat(env["ORDERD_DB"]); err == nil {
		t.Fatal("the environment's file was written although a flag named another")
	}
}

// TestRefusedCommandsWriteNothing: a command refused for its flags or its files leaves no
// file behind where it would have made one.
func TestRefusedCommandsWriteNothing(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "orderd.db")
	badPets := filepath.Join(dir, "pets.json")
	os.WriteFile(badPets, []byte(`[{"id": 1, "status": "lost"}]`), 0o600)
	for _, args := range [][]string{
		{"import", "--db", db, "--orders", "../../testdata/demo/orders.json", "--pets", badPets},
		{"keys", "create", "--plan", "gold", "--db", db},
		{"keys", "create", "--plan", "free", "--name", "osk_Ku2xWs", "--db", db},
		{"keys", "list", "--db", db},
		{"serve", "--db", db},
	} {
		if _, errOut, code := orderd(t, nil, args...); code != 2 {
			t.Fatalf("%v: exit %d, want 2: %s", args, code, errOut)
		}
		if _, err := os.Stat(db); err == nil {
			t.Fatalf("%v made %s", args, db)
		}
	}
}

func TestHelp(t *testing.T) {
	out, _, code := orderd(t, nil, "serve", "--help")
	if code != 0 || !strings.Contains(out, "--addr") || !strings.Contains(out, "ORDERD_ADDR") || !strings.Contains(out, "127.0.0.1:8080") {
		t.Fatalf("serve --help: exit %d\n%s", code, out)
	}
}
