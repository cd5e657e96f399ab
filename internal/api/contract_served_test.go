package api_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/petstore/orderd"
)

func TestOpenAPIDocumentIsServedWithoutKey(t *testing.T) {
	h := newHarness(t)
	res, body := h.do(t, "GET", "/v1/openapi.yaml")
	if res.StatusCode != 200 || !bytes.Equal(body, orderd.OpenAPI) || res.Header.Get("Content-Type") != "application/yaml" {
		t.Fatalf("got %d %q, %d bytes", res.StatusCode, res.Header.Get("Content-Type"), len(body))
	}
	// Static and public: not rate limited, so no visitor's quota is spent on it (h.do checks
	// that no rate-limit header claims otherwise).
	for i := range 70 {
		if res, _ := h.do(t, "GET", "/v1/openapi.yaml"); res.StatusCode != 200 {
			t.Fatalf("request %d for the document: %d", i+2, res.StatusCode)
		}
	}
	if res, _ := h.do(t, "GET", "/v1/store/orders"); parseRateHeaders(t, res).remaining != 59 {
		t.Fatal("loading the document spent the address's quota")
	}
	// Another method is 405 with a key; without one it is 401, since authentication comes
	// before the router's verdict on the method.
	if res, _ := h.do(t, "DELETE", "/v1/openapi.yaml"); res.StatusCode != 401 {
		t.Fatalf("DELETE without key: %d", res.StatusCode)
	}
	if res, _ := h.authed(t, "DELETE", "/v1/openapi.yaml"); res.StatusCode != 405 {
		t.Fatalf("DELETE with key: %d", res.StatusCode)
	}
}

func TestDocsPage(t *testing.T) {
	h := newHarness(t)
	get := func(path string) (*http.Response, string) {
		res, err := http.Get(h.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res, string(b)
	}
	res, page := get("/docs")
	// The page names the documents in an HTML attribute, its quotes escaped; both are offered.
	if res.StatusCode != 200 || !strings.Contains(page, `/v2/openapi.yaml`) || !strings.Contains(page, `/v1/openapi.yaml`) ||
		!strings.Contains(res.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Fatalf("/docs: %d %s", res.StatusCode, page)
	}
	for _, asset := range []string{"/docs/init.js", "/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css"} {
		if res, body := get(asset); res.StatusCode != 200 || len(body) < 20 {
			t.Errorf("%s: %d, %d bytes", asset, res.StatusCode, len(body))
		}
	}
	if res, _ := get("/docs/assets/../../v1/store/orders"); res.StatusCode == 200 {
		t.Error("the asset server escapes its folder")
	}
}
