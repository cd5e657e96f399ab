package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/api/apitest"
)

// corsPage is a page of another origin whose script lists the orders of api with key, as a
// shop's page would (Authorization forces a preflight), and writes what it could read.
const corsPage = `<!doctype html><html><body><pre id="result">pending</pre><script>
const show = s => { document.getElementById("result").textContent = s; };
fetch(%q + "/v1/store/orders", {headers: {"Authorization": "Bearer " + %q}})
  .then(r => show("status=" + r.status + " remaining=" + r.headers.get("X-RateLimit-Remaining") +
    " etag=" + r.headers.get("ETag") + " request-id=" + r.headers.get("X-Request-Id")))
  .catch(e => show("failed=" + e));
</script></body></html>`

var corsResult = regexp.MustCompile(`<pre id="result">([^<]*)</pre>`)

// TestBrowserOfAnotherOriginReadsTheAPI: headless Chromium opens a page served from another
// origin (another port), whose script calls the real binary with a key. With the page's
// origin in --cors-allow-origins the script reads the rate-limit headers and the ETag;
// without it, the browser refuses the answer to the script, as before CORS existed.
func TestBrowserOfAnotherOriginReadsTheAPI(t *testing.T) {
	browser := apitest.Chromium(t)
	db := filepath.Join(t.TempDir(), "orderd.db")
	orderdProcess(t, "import", "--db", db, "--orders", "../../testdata/demo/orders.json")
	key := firstLine(orderdProcess(t, "keys", "create", "--plan", "pro", "--db", db))

	// The orderd the page calls, set before each visit; a browser of the last visit may still
	// ask the page server for something (a favicon) while the next is set.
	var api atomic.Value
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, corsPage, api.Load(), key)
	}))
	defer page.Close()

	visit := func() string {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu",
			"--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
			"--disable-sync", "--disable-dev-shm-usage", "--user-data-dir="+t.TempDir(),
			"--virtual-time-budget=10000", "--dump-dom", page.URL).Output()
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
		m := corsResult.FindStringSubmatch(string(out))
		if m == nil {
			t.Fatalf("no result in the page: %s", out)
		}
		return m[1]
	}

	withCORS, _ := serveProcess(t, "--db", db, "--cors-allow-origins", "https://shop.example,"+page.URL)
	api.Store(withCORS)
	got := visit()
	want := regexp.MustCompile(`^status=200 remaining=\d+ etag=(W/)?"[^"]+" request-id=\S+$`)
	if !want.MatchString(got) {
		t.Fatalf("the page's script read %q; want the status, X-RateLimit-Remaining, ETag and X-Request-Id", got)
	}
	req, _ := http.NewRequest("GET", withCORS+"/v1/store/orders", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	if ours, _ := apitest.Load(t).Do(t, http.DefaultClient, req); !strings.Contains(got, " etag="+ours.Header.Get("ETag")+" ") {
		t.Errorf("the script read %q; want the list's ETag, %s", got, ours.Header.Get("ETag"))
	}

	without, _ := serveProcess(t, "--db", db) // CORS off, the default
	api.Store(without)
	if got := visit(); !regexp.MustCompile(`^failed=TypeError`).MatchString(got) {
		t.Fatalf("without --cors-allow-origins the page's script read %q; want the browser to refuse", got)
	}
}

// TestCORSFlag: --cors-allow-origins and its variable reach the Config, the flag first; none
// by default (CORS off).
func TestCORSFlag(t *testing.T) {
	redis := []string{"--redis-url", "redis://127.0.0.1:1"} // parsing connects to nothing
	vars := map[string]string{"ORDERD_CORS_ALLOW_ORIGINS": "https://shop.example, http://localhost:3000"}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, nil, ""},
		{[]string{"--cors-allow-origins", "https://a.example"}, nil, "https://a.example"},
		{nil, vars, "https://shop.example http://localhost:3000"},
		{[]string{"--cors-allow-origins", "https://a.example"}, vars, "https://a.example"},
	} {
		cfg, _, err := parseServe(append(redis, tc.args...), func(k string) string { return tc.env[k] }, io.Discard)
		if got := strings.Join(cfg.CORSAllowOrigins, " "); err != nil || got != tc.want {
			t.Errorf("%v %v: %v, %q; want %q", tc.args, tc.env, err, got, tc.want)
		}
	}
}
