package main

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/redistest"
)

// TestRedisMode: import, keys and serve against a real Redis, as an operator would.
func TestRedisMode(t *testing.T) {
	srv := redistest.Start(t)
	prefix := redistest.Prefix(t)
	redisArgs := []string{"--redis-url", srv.URL(), "--redis-prefix", prefix}

	_, errOut, code := orderd(t, nil, append([]string{"import", "--orders", "../../testdata/demo/orders.json", "--pets", "../../testdata/demo/pets.json"}, redisArgs...)...)
	if code != 0 || !strings.Contains(errOut, "imported 21 orders (42 fields changed) and 7 pets") {
		t.Fatalf("import: exit %d: %s", code, errOut)
	}
	_, errOut, _ = orderd(t, nil, append([]string{"import", "--orders", "../../testdata/demo/orders.json"}, redisArgs...)...)
	if !strings.Contains(errOut, "(0 fields changed)") {
		t.Fatalf("second import: %s", errOut)
	}

	out, errOut, code := orderd(t, nil, append([]string{"keys", "create", "--plan", "pro", "--name", "ops"}, redisArgs...)...)
	if code != 0 {
		t.Fatalf("keys create: %s", errOut)
	}
	key := strings.TrimSpace(out)
	if out, _, _ := orderd(t, nil, append([]string{"keys", "list"}, redisArgs...)...); !strings.Contains(out, "ops") || strings.Contains(out, key) {
		t.Fatalf("keys list:\n%s", out)
	}

	base, stop := serveInBackground(t, redisArgs...)
	contract := apitest.Load(t)
	get := func(path string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		return contract.Do(t, http.DefaultClient, req)
	}
	if res, body := get("/v1/store/orders"); res.StatusCode != 200 || !bytes.Contains(body, []byte(`"id":9223372036854775807,"petId":9223372036854775806`)) {
		t.Fatalf("list: %d %s", res.StatusCode, body)
	}
	if res, _ := get("/v1/pets/1002"); res.StatusCode != 200 {
		t.Fatalf("pet: %d", res.StatusCode)
	}
	if res, body := get("/readyz"); res.StatusCode != 200 {
		t.Fatalf("readyz: %d %s", res.StatusCode, body)
	}
	if _, _, code := orderd(t, nil, append([]string{"keys", "revoke", "ops"}, redisArgs...)...); code != 0 {
		t.Fatal("revoke failed")
	}
	// The running server refuses it at the next request: the revocation was acknowledged
	// (the command exited 0) before that request started.
	if res, _ := get("/v1/store/orders"); res.StatusCode != 401 {
		t.Fatalf("revoked key: %d at the next request; want 401", res.StatusCode)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestUnreachableRedisExits2(t *testing.T) {
	srv := redistest.Start(t)
	url := srv.URL()
	srv.Stop()
	for _, args := range [][]string{
		{"keys", "list", "--redis-url", url},
		{"keys", "create", "--plan", "free", "--redis-url", url},
		{"import", "--orders", "../../testdata/demo/orders.json", "--redis-url", url},
		{"serve", "--redis-url", url, "--limiter-fallback", "open"},
		{"serve", "--redis-url", "http://" + srv.Addr},
		{"import", "--redis-url", url, "--orders", "../../testdata/none.json"},
	} {
		out, errOut, code := orderd(t, nil, args...)
		if code != 2 || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line", args, code, out, errOut)
		}
	}
}

// TestServeStartsWithoutRedis: serve starts, is not ready and answers 503 while Redis is
// down, and becomes ready by itself when Redis answers.
func TestServeStartsWithoutRedis(t *testing.T) {
	srv := redistest.Start(t)
	srv.Stop()
	base, stop := serveInBackground(t, "--redis-url", srv.URL(), "--redis-timeout", "200ms")
	contract := apitest.Load(t)
	status := func(path string) int {
		req, _ := http.NewRequest("GET", base+path, nil)
		res, _ := contract.Do(t, http.DefaultClient, req)
		return res.StatusCode
	}
	req, _ := http.NewRequest("GET", base+"/v1/store/orders", nil)
	req.Header.Set("Authorization", "Bearer osk_whatever")
	if res, _ := contract.Do(t, http.DefaultClient, req); res.StatusCode != 503 || res.Header.Get("Retry-After") == "" {
		t.Fatalf("list without Redis: %d", res.StatusCode)
	}
	if got := status("/readyz"); got != 503 {
		t.Fatalf("/readyz without Redis: %d", got)
	}
	if got := status("/healthz"); got != 200 {
		t.Fatalf("/healthz: %d", got)
	}
	srv.Restart(t)
	if got := status("/readyz"); got != 200 {
		t.Fatalf("/readyz after Redis started: %d", got)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
