package api_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/petstore/orderd/gen"
)

// TestHeadAnswersAsGet: wherever GET is served, HEAD gets the GET's status and headers
// (Content-Length included where the GET sends one) and no body, rate limited and
// authenticated like the GET; h.do checks each answer against the contract.
func TestHeadAnswersAsGet(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name, path string
		key        bool
		status     int
	}{
		{"health", "/healthz", false, 200},
		{"readiness", "/readyz", false, 200},
		{"the list", "/v1/store/orders", true, 200},
		{"the list without a key", "/v1/store/orders", false, 401},
		{"the document", "/v1/openapi.yaml", false, 200},
		{"a pet", "/v1/pets/7", true, 200},
		{"an unknown pet", "/v1/pets/8", true, 404},
		{"the docs page", "/docs", false, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			send := h.do // checked against the contract under /v1
			switch {
			case tc.key:
				send = h.authed
			case !strings.HasPrefix(tc.path, "/v1/"):
				send = h.raw
			}
			get, getBody := send(t, "GET", tc.path)
			head, headBody := send(t, "HEAD", tc.path)
			if get.StatusCode != tc.status || head.StatusCode != tc.status {
				t.Fatalf("GET %d, HEAD %d; want %d", get.StatusCode, head.StatusCode, tc.status)
			}
			if len(headBody) != 0 {
				t.Errorf("HEAD sent a body of %d bytes", len(headBody))
			}
			if cl := get.Header.Get("Content-Length"); cl != "" {
				if cl != strconv.Itoa(len(getBody)) || head.Header.Get("Content-Length") != cl {
					t.Errorf("Content-Length: GET %q (body %d bytes), HEAD %q", cl, len(getBody), head.Header.Get("Content-Length"))
				}
			}
			for _, name := range []string{"Content-Type", "ETag", "X-Ratelimit-Limit", "Ratelimit-Policy", "Deprecation", "Cache-Control", "Www-Authenticate"} {
				if g, hd := get.Header.Get(name), head.Header.Get(name); g != hd {
					t.Errorf("%s: GET %q, HEAD %q", name, g, hd)
				}
			}
			if get.Header.Get("X-Ratelimit-Remaining") != "" { // under /v1, but for the document
				g, _ := strconv.Atoi(get.Header.Get("X-Ratelimit-Remaining"))
				hd, _ := strconv.Atoi(head.Header.Get("X-Ratelimit-Remaining"))
				if hd != g-1 {
					t.Errorf("X-RateLimit-Remaining: GET %d, HEAD %d; a HEAD counts like a GET", g, hd)
				}
			}
		})
	}
}

// TestPathsOfNoTemplateAre404: whatever the method, a path that matches no path template is
// 404, and only a path that matches one with another method is 405.
func TestPathsOfNoTemplateAre404(t *testing.T) {
	h := newHarness(t)
	for _, path := range []string{"/v1/store/orders/2/items", "/v1/store/orders//2", "/v1/store/orders/", "/v1/pets/7/", "/v1/pets//7"} {
		for _, method := range []string{"GET", "DELETE", "POST", "OPTIONS"} {
			res, body := h.authed(t, method, path)
			if res.StatusCode != 404 {
				t.Errorf("%s %s: %d, want 404", method, path, res.StatusCode)
				continue
			}
			wantError(t, res, body, 404, gen.ErrorCodeNotFound)
			if allow := res.Header.Get("Allow"); allow != "" {
				t.Errorf("%s %s: a 404 with Allow %q", method, path, allow)
			}
		}
	}
	res, body := h.authed(t, "GET", "/v1/store/orders/2")
	wantError(t, res, body, 405, gen.ErrorCodeMethodNotAllowed)
	if allow := res.Header.Get("Allow"); allow != "DELETE" {
		t.Errorf("GET on an order: Allow %q, want DELETE", allow)
	}
}

// TestIfNoneMatchMessages: a short value that breaks the pattern is told so, not that it is
// too long; a long one is told its length.
func TestIfNoneMatchMessages(t *testing.T) {
	h := newHarness(t)
	res, body := h.authed(t, "GET", "/v1/store/orders", "If-None-Match", "garbage")
	e := wantError(t, res, body, 400, gen.ErrorCodeInvalidRequest)
	if !strings.Contains(e.Message, "If-None-Match") || !strings.Contains(e.Message, "pattern") || strings.Contains(e.Message, "at most") {
		t.Errorf("garbage: message %q", e.Message)
	}
	res, body = h.authed(t, "GET", "/v1/store/orders", "If-None-Match", `"`+strings.Repeat("a", 2000)+`"`)
	e = wantError(t, res, body, 400, gen.ErrorCodeInvalidRequest)
	if !strings.Contains(e.Message, "at most 1024 characters") {
		t.Errorf("a long tag: message %q", e.Message)
	}
}

// TestIfNoneMatchOnSeveralLines: the lines of If-None-Match are one list (RFC 9110 §5.3): a
// tag on the second line matches, and a bad one on any line is a 400 about the header.
func TestIfNoneMatchOnSeveralLines(t *testing.T) {
	h := newHarness(t)
	res, _ := h.authed(t, "GET", "/v1/store/orders")
	tag := res.Header.Get("ETag")
	res, body := h.authed(t, "GET", "/v1/store/orders", "If-None-Match", `W/"stale"`, "If-None-Match", tag)
	if res.StatusCode != http.StatusNotModified {
		t.Fatalf("the tag on the second line: %d %s, want 304", res.StatusCode, body)
	}
	res, _ = h.authed(t, "GET", "/v1/store/orders", "If-None-Match", `W/"stale"`, "If-None-Match", `"other"`)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("two lines of stale tags: %d, want 200", res.StatusCode)
	}
	res, body = h.authed(t, "GET", "/v1/store/orders", "If-None-Match", tag, "If-None-Match", "garbage")
	e := wantError(t, res, body, 400, gen.ErrorCodeInvalidRequest)
	if !strings.Contains(e.Message, "If-None-Match") {
		t.Errorf("message %q does not name the header", e.Message)
	}
}

// TestRootAndDocsSlashLeadToDocs: / and /docs/ send the visitor to /docs.
func TestRootAndDocsSlashLeadToDocs(t *testing.T) {
	h := newHarness(t)
	noFollow := *h.srv.Client()
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for path, status := range map[string]int{"/": http.StatusFound, "/docs/": http.StatusMovedPermanently} {
		res, err := noFollow.Get(h.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != status || res.Header.Get("Location") != "/docs" {
			t.Errorf("%s: %d to %q, want %d to /docs", path, res.StatusCode, res.Header.Get("Location"), status)
		}
		res, body := h.raw(t, "GET", path) // followed
		if res.StatusCode != 200 || !strings.Contains(string(body), "swagger-ui") {
			t.Errorf("%s followed: %d", path, res.StatusCode)
		}
	}
}

// raw sends a request outside the contract's operations (health, docs) and reads the answer.
func (h *harness) raw(tb testing.TB, method, path string, header ...string) (*http.Response, []byte) {
	tb.Helper()
	res, err := h.srv.Client().Do(h.request(tb, method, path, header...))
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return res, body
}
