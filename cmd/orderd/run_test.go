package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/api/apitest"
)

// orderd runs the program as main would, with env as its environment.
func orderd(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut)
	code = exitCode(err, &errOut)
	return out.String(), errOut.String(), code
}

func createKey(t *testing.T, keysFile string, args ...string) string {
	t.Helper()
	out, errOut, code := orderd(t, nil, append([]string{"keys", "create", "--keys-file", keysFile}, args...)...)
	if code != 0 {
		t.Fatalf("keys create: exit %d: %s", code, errOut)
	}
	key := strings.TrimSuffix(out, "\n")
	if strings.ContainsAny(key, " \n\t") || !strings.HasPrefix(key, "osk_") {
		t.Fatalf("keys create printed %q; want the key alone", out)
	}
	return key
}

// serveInBackground starts `orderd serve` on a free loopback port and returns its base URL
// and a function that stops it (as SIGTERM would) and returns run's error.
func serveInBackground(t *testing.T, args ...string) (string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logR, logW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), func(string) string { return "" }, io.Discard, logW)
		logW.Close()
		done <- err
	}()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(logR)
		for sc.Scan() {
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
				addr <- line.Addr
			}
		}
		close(addr)
	}()
	stop := func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("serve did not stop")
			return nil
		}
	}
	select {
	case a, ok := <-addr:
		if !ok {
			t.Fatalf("serve stopped before listening: %v", <-done)
		}
		return "http://" + a, stop
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start listening")
	}
	return "", stop
}

func TestServeEndToEnd(t *testing.T) {
	dir := t.TempDir()
	keysFile := filepath.Join(dir, "keys.json")
	key := createKey(t, keysFile, "--plan", "free", "--name", "e2e")
	base, stop := serveInBackground(t, "--keys-file", keysFile, "--keys-reload", "20ms",
		"--orders", "../../testdata/demo/orders.json", "--pets", "../../testdata/demo/pets.json")

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

	// A key created while the server runs works without a restart; a revoked one stops.
	late := createKey(t, keysFile, "--plan", "pro", "--name", "late")
	waitForStatus(t, do, late, 200)
	if _, errOut, code := orderd(t, nil, "keys", "revoke", "late", "--keys-file", keysFile); code != 0 {
		t.Fatalf("revoke: %s", errOut)
	}
	waitForStatus(t, do, late, 401)

	if err := stop(); err != nil {
		t.Fatalf("serve returned %v after a clean shutdown", err)
	}
}

func waitForStatus(t *testing.T, do func(string, string, string) (*http.Response, []byte), key string, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		res, _ := do("GET", "/v1/store/orders", key)
		if res.StatusCode == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("status %d, want %d within 5s", res.StatusCode, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestKeysCommands(t *testing.T) {
	keysFile := filepath.Join(t.TempDir(), "keys.json")
	key := createKey(t, keysFile, "--plan", "enterprise", "--per-minute", "5", "--per-day", "50", "--name", "big")
	createKey(t, keysFile, "--plan", "free")

	out, _, code := orderd(t, nil, "keys", "list", "--keys-file", keysFile)
	if code != 0 || !strings.Contains(out, "big") || !strings.Contains(out, "enterprise") || !strings.Contains(out, key[:10]) {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	data, _ := os.ReadFile(keysFile)
	if strings.Contains(out, key) || strings.Contains(out, key[10:]) || bytes.Contains(data, []byte(key)) {
		t.Fatal("the key itself appears in the listing or the file")
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, `"hash"`) {
			hash := strings.Split(line, `"`)[3]
			if strings.Contains(out, hash) {
				t.Fatal("the listing shows a hash")
			}
		}
	}
	if _, _, code := orderd(t, nil, "keys", "revoke", key[:10], "--keys-file", keysFile); code != 0 {
		t.Fatal("revoke by prefix failed")
	}
	if out, _, _ := orderd(t, nil, "keys", "list", "--keys-file", keysFile); strings.Contains(out, "big") {
		t.Fatalf("revoked key still listed:\n%s", out)
	}
	// The file named by the environment, when no flag names one.
	if out, _, code := orderd(t, map[string]string{"ORDERD_KEYS_FILE": keysFile}, "keys", "list"); code != 0 || !strings.Contains(out, "key-") {
		t.Fatalf("ORDERD_KEYS_FILE: exit %d\n%s", code, out)
	}
}

func TestUsageErrorsExit2InOneLine(t *testing.T) {
	dir := t.TempDir()
	keysFile := filepath.Join(dir, "keys.json")
	createKey(t, keysFile, "--plan", "free")
	badOrders := filepath.Join(dir, "orders.json")
	os.WriteFile(badOrders, []byte("[\n  {\"id\": 1, \"status\": \"pending\"},\n  {\"id\": 2, \"status\": \"lost\"}\n]\n"), 0o600)
	dupOrders := filepath.Join(dir, "dup.json")
	os.WriteFile(dupOrders, []byte(`[{"id": 1, "status": "pending"}, {"id": 1, "status": "shipped"}]`), 0o600)
	badKeys := filepath.Join(dir, "badkeys.json")
	os.WriteFile(badKeys, []byte(`[{"name": "x"`), 0o600)

	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no command", nil, nil, "no command"},
		{"unknown command", nil, []string{"fly"}, "unknown command"},
		{"unknown flag", nil, []string{"serve", "--bogus"}, "bogus"},
		{"bad duration", nil, []string{"serve", "--keys-file", keysFile, "--shutdown-timeout", "soon"}, "shutdown-timeout"},
		{"bad env value", map[string]string{"ORDERD_SHUTDOWN_TIMEOUT": "soon"}, []string{"serve", "--keys-file", keysFile}, "ORDERD_SHUTDOWN_TIMEOUT"},
		{"no keys file", nil, []string{"serve"}, "--keys-file is required"},
		{"missing keys file", nil, []string{"serve", "--keys-file", filepath.Join(dir, "none.json")}, "none.json"},
		{"malformed keys file", nil, []string{"serve", "--keys-file", badKeys}, "badkeys.json:1:"},
		{"bad order", nil, []string{"serve", "--keys-file", keysFile, "--orders", badOrders}, "orders.json:3:3: order 2: status \"lost\""},
		{"duplicate order", nil, []string{"serve", "--keys-file", keysFile, "--orders", dupOrders}, "dup.json:1:34: order 1: duplicate id"},
		{"missing orders file", nil, []string{"serve", "--keys-file", keysFile, "--orders", filepath.Join(dir, "none.json")}, "none.json"},
		{"sunset before deprecation", nil, []string{"serve", "--keys-file", keysFile, "--pets-sunset-at", "2020-01-01"}, "pets-sunset-at"},
		{"bad trusted proxy", nil, []string{"serve", "--keys-file", keysFile, "--trusted-proxies", "10.0.0.0/8,proxy.local"}, "proxy.local"},
		{"negative ban-after", nil, []string{"serve", "--keys-file", keysFile, "--ban-after", "-1"}, "--ban-after"},
		{"bad sunset date", nil, []string{"serve", "--keys-file", keysFile, "--pets-sunset-at", "July"}, "pets-sunset-at"},
		{"unknown plan", nil, []string{"keys", "create", "--plan", "gold", "--keys-file", keysFile}, "gold"},
		{"enterprise without limits", nil, []string{"keys", "create", "--plan", "enterprise", "--keys-file", keysFile}, "enterprise"},
		{"limits on a fixed plan", nil, []string{"keys", "create", "--plan", "pro", "--per-day", "5", "--keys-file", keysFile}, "enterprise only"},
		{"revoke unknown", nil, []string{"keys", "revoke", "nobody", "--keys-file", keysFile}, "nobody"},
		{"keys without file", nil, []string{"keys", "list"}, "--keys-file or --redis-url is required"},
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
	keysFile := filepath.Join(t.TempDir(), "keys.json")
	env := map[string]string{"ORDERD_KEYS_FILE": filepath.Join(t.TempDir(), "other.json")}
	out, _, code := orderd(t, env, "keys", "create", "--plan", "free", "--keys-file", keysFile)
	if code != 0 || out == "" {
		t.Fatal("create failed")
	}
	if _, err := os.Stat(keysFile); err != nil {
		t.Fatalf("the flag's file was not written: %v", err)
	}
	if _, err := os.Stat(env["ORDERD_KEYS_FILE"]); err == nil {
		t.Fatal("the environment's file was written although a flag named another")
	}
}

func TestHelp(t *testing.T) {
	out, _, code := orderd(t, nil, "serve", "--help")
	if code != 0 || !strings.Contains(out, "--addr") || !strings.Contains(out, "ORDERD_ADDR") || !strings.Contains(out, "127.0.0.1:8080") {
		t.Fatalf("serve --help: exit %d\n%s", code, out)
	}
}
