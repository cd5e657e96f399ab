package api_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/api"
)

// sendSized writes a request whose line and header fields take exactly size bytes, as
// api.MaxHeaderBytes counts them, and returns the answer, checked against the contract.
func (h *harness) sendSized(t *testing.T, path string, size int) (*http.Response, []byte) {
	t.Helper()
	return h.sendSizedWith(t, path, size, "", "")
}

// sendSizedWith is sendSized with more header fields (each line with its CRLF) and a body, sent.
func (h *harness) sendSizedWith(t *testing.T, path string, size int, fields, sent string) (*http.Response, []byte) {
	t.Helper()
	host := strings.TrimPrefix(h.srv.URL, "http://")
	head := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n%s", path, host, h.key, fields)
	pad := size - len(head) - len("X-Pad: \r\n")
	if pad < 0 {
		t.Fatalf("size %d is below the request's own %d bytes", size, len(head))
	}
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "%sX-Pad: %s\r\n\r\n%s", head, strings.Repeat("a", pad), sent); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", h.srv.URL+path, nil)
	res, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.contract.Check(req, res, body); err != nil {
		t.Errorf("%d bytes of header → %d breaks the contract: %v\nbody: %s", size, res.StatusCode, err, body)
	}
	return res, body
}

// TestHeaderLimitIsExact: a request whose line and header fields take MaxHeaderBytes is
// served; one byte more is a 431 Error with the rate-limit headers, under /v1 and outside.
func TestHeaderLimitIsExact(t *testing.T) {
	h := newHarness(t)
	if res, body := h.sendSized(t, "/v1/store/orders", api.MaxHeaderBytes); res.StatusCode != 200 {
		t.Fatalf("at the limit: %d %s", res.StatusCode, body)
	}
	res, body := h.sendSized(t, "/v1/store/orders", api.MaxHeaderBytes+1)
	e := wantError(t, res, body, http.StatusRequestHeaderFieldsTooLarge, gen.ErrorCodeHeaderTooLarge)
	if !strings.Contains(e.Message, fmt.Sprint(api.MaxHeaderBytes)) {
		t.Errorf("message %q does not say the limit", e.Message)
	}
	if res, _ := h.sendSized(t, "/healthz", api.MaxHeaderBytes+1); res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("/healthz one byte over: %d", res.StatusCode)
	}
}

// TestHeaderLimitCountsTransferEncoding: Go takes Transfer-Encoding out of the fields the
// handler sees; the limit still counts it, as the field it was.
func TestHeaderLimitCountsTransferEncoding(t *testing.T) {
	h := newHarness(t)
	const chunked = "Transfer-Encoding: chunked\r\n"
	if res, body := h.sendSizedWith(t, "/v1/store/orders", api.MaxHeaderBytes, chunked, "0\r\n\r\n"); res.StatusCode != 200 {
		t.Fatalf("at the limit: %d %s", res.StatusCode, body)
	}
	res, body := h.sendSizedWith(t, "/v1/store/orders", api.MaxHeaderBytes+1, chunked, "0\r\n\r\n")
	wantError(t, res, body, http.StatusRequestHeaderFieldsTooLarge, gen.ErrorCodeHeaderTooLarge)
}
