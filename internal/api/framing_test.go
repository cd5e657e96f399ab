package api_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestFramingConflictClosesTheConnection: a request with both Content-Length and
// Transfer-Encoding is answered and its connection then closed (RFC 9112 §6.1), whatever
// the answer; one framed by Content-Length alone keeps its connection.
func TestFramingConflictClosesTheConnection(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name, path, framing, body string
		status                    int
		closes                    bool
	}{
		{"both", "/v1/store/orders", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n", 200, true},
		{"both, on an error", "/v1/nowhere", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n", 404, true},
		{"chunked", "/v1/store/orders", "Transfer-Encoding: chunked\r\n", "0\r\n\r\n", 200, true},
		{"Content-Length", "/v1/store/orders", "Content-Length: 0\r\n", "", 200, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host := strings.TrimPrefix(h.srv.URL, "http://")
			conn, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_, err = io.WriteString(conn, "GET "+tc.path+" HTTP/1.1\r\nHost: "+host+"\r\nAuthorization: Bearer "+h.key+"\r\n"+tc.framing+"\r\n"+tc.body)
			if err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(conn)
			req, _ := http.NewRequest("GET", h.srv.URL+tc.path, nil)
			res, err := http.ReadResponse(r, req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if err := h.contract.Check(req, res, body); err != nil {
				t.Errorf("the answer breaks the contract: %v\nbody: %s", err, body)
			}
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, tc.status, body)
			}
			conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			_, err = r.ReadByte()
			switch {
			case tc.closes && !errors.Is(err, io.EOF):
				t.Fatalf("after the answer: %v; want the connection closed", err)
			case !tc.closes && !errors.Is(err, os.ErrDeadlineExceeded):
				t.Fatalf("after the answer: %v; want the connection kept open", err)
			}
		})
	}
}
