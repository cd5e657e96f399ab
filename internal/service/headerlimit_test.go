package service_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/service/servicetest"
)

// TestHeaderLimitOfTheServer: on the real server, 17 KiB of header (which Go's MaxHeaderBytes
// alone lets through, by its 4 KiB of slack) is a 431 JSON Error; far past the limit, Go
// answers 431 itself, before any handler, in plain text (docs/security.md lists this).
func TestHeaderLimitOfTheServer(t *testing.T) {
	cfg, key := embedded(t, order.Free)
	svc := servicetest.Run(t, cfg)
	ct := apitest.Load(t)
	send := func(pad int) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", svc.URL()+"/v1/store/orders", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("X-Pad", strings.Repeat("a", pad))
		return ct.Do(t, http.DefaultClient, req)
	}
	if res, body := send(api.MaxHeaderBytes - 1024); res.StatusCode != http.StatusOK {
		t.Fatalf("1 KiB under the limit: %d %s", res.StatusCode, body)
	}
	res, body := send(17 << 10)
	if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge || !strings.Contains(string(body), `"header_too_large"`) {
		t.Fatalf("17 KiB of header: %d %s, want a 431 Error", res.StatusCode, body)
	}

	// Past Go's slack: the server's own answer, which no handler sees.
	req, _ := http.NewRequest("GET", svc.URL()+"/v1/store/orders", nil)
	req.Header.Set("X-Pad", strings.Repeat("a", api.MaxHeaderBytes+8<<10))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("24 KiB of header: %d, want Go's 431", res.StatusCode)
	}
}
