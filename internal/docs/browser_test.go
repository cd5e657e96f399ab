package docs_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/service/servicetest"
)

var firstOption = regexp.MustCompile(`<option value="([^"]*)"`)

// selectMarkup is a <select> and, in its group, the markup of its options.
var selectMarkup = regexp.MustCompile(`(?s)<select[^>]*>(.*?)</select>`)

// options are the values of the <option>s in a <select>'s markup.
var options = regexp.MustCompile(`<option[^>]*\svalue="([^"]*)"`)

// TestDocsRenderInABrowser opens /docs in headless Chromium against the running service and
// checks that Swagger UI rendered every operation of each version's document, and takes a
// screenshot.
func TestDocsRenderInABrowser(t *testing.T) {
	browser := apitest.Chromium(t)
	cfg := servicetest.Embedded(t, ordertest.Fixture(), nil)
	srv := servicetest.Run(t, cfg)

	run := func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		// The flags keep Chromium off the network (this machine has none) and quiet.
		base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--disable-dev-shm-usage", "--user-data-dir=" + t.TempDir(), "--virtual-time-budget=20000"}
		out, err := exec.CommandContext(ctx, browser, append(base, args...)...).Output()
		if err != nil {
			t.Fatalf("chromium %v: %v", args, err)
		}
		return string(out)
	}

	// The page offers both versions, v2 first; "?urls.primaryName=v1" is Swagger UI's way to
	// open another one, as its selector does.
	for _, page := range []struct {
		path, server string
		want         []string
	}{
		{"/docs", "/v2", []string{"/store/orders", "/store/orders/{orderId}", "/openapi.yaml",
			"findOrders", "getOrder", "cancelOrder", "listEvents", "Store Order Service", "2.1.0", "pageToken"}},
		{"/docs?urls.primaryName=v1", "/v1", []string{"/store/orders", "/store/orders/{orderId}", "/pets/{petId}", "/openapi.yaml",
			"listOrders", "cancelOrder", "getPetById", "Store Order Service", "1.1.0"}},
	} {
		dom := run("--dump-dom", srv.URL()+page.path)
		for _, want := range page.want {
			if !strings.Contains(dom, want) {
				t.Errorf("%s: the rendered page lacks %q", page.path, want)
			}
		}
		// The top bar's selector offers both documents. Only the markup Swagger UI rendered
		// counts: the page's data-documents attribute names them too, rendered or not.
		offered := map[string]bool{}
		if start := strings.Index(dom, `<header class="topbar"`); start >= 0 {
			bar, _, _ := strings.Cut(dom[start:], "</header>")
			if sel := selectMarkup.FindStringSubmatch(bar); sel != nil {
				for _, o := range options.FindAllStringSubmatch(sel[1], -1) {
					offered[o[1]] = true
				}
			}
		}
		for _, doc := range []string{"/v1/openapi.yaml", "/v2/openapi.yaml"} {
			if !offered[doc] {
				t.Errorf("%s: the top bar's selector does not offer %s (it offers %v)", page.path, doc, offered)
			}
		}
		// "Try it out" sends to the server chosen in the dropdown, the first by default: it
		// must be this instance (the relative base of the version shown), which the page's
		// CSP lets it reach.
		servers := strings.Index(dom, `class="servers"`)
		if servers < 0 {
			t.Errorf("%s: the rendered page has no servers dropdown", page.path)
		} else if first := firstOption.FindStringSubmatch(dom[servers:]); first == nil || first[1] != page.server {
			t.Errorf("%s: the servers dropdown's first entry is %q, not this instance's %s", page.path, first, page.server)
		}
		if t.Failed() {
			t.Logf("DOM (first 3000 bytes): %.3000s", dom)
		}
	}
	res, err := http.Get(srv.URL() + "/docs")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("the page's Content-Security-Policy %q does not let it send requests to its own origin", csp)
	}

	shot := filepath.Join(t.TempDir(), "docs.png")
	if dir := os.Getenv("ORDERD_SCREENSHOT_DIR"); dir != "" {
		shot = filepath.Join(dir, "docs.png")
	}
	run("--window-size=1280,1400", "--screenshot="+shot, srv.URL()+"/docs")
	png, err := os.ReadFile(shot)
	if err != nil || len(png) < 20_000 || string(png[1:4]) != "PNG" {
		t.Fatalf("screenshot: %d bytes, %v", len(png), err)
	}
}
