package contract

import (
	"net/http"
	"testing"
)

// TestCheckCatchesDrift proves the checker can fail: each answer here breaks openapi.yaml.
func TestCheckCatchesDrift(t *testing.T) {
	c, err := New("/v1")
	if err != nil {
		t.Fatal(err)
	}
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	for _, tc := range []struct {
		name, method, path string
		status             int
		header             http.Header
		body               string
	}{
		{"undeclared status", "DELETE", "/v1/store/orders/1", 418, jsonHeader, `{"code":"internal_error","message":"x","status":418}`},
		{"id as a string", "GET", "/v1/store/orders", 200, http.Header{"Content-Type": {"application/json"}, "Etag": {`W/"x"`}}, `[{"id":"1"}]`},
		{"unknown status value", "GET", "/v1/store/orders", 200, http.Header{"Content-Type": {"application/json"}, "Etag": {`W/"x"`}}, `[{"id":1,"status":"lost"}]`},
		{"list without ETag", "GET", "/v1/store/orders", 200, jsonHeader, `[]`},
		{"error without code", "DELETE", "/v1/store/orders/1", 404, jsonHeader, `{"message":"x","status":404}`},
		{"unknown error code", "DELETE", "/v1/store/orders/1", 404, jsonHeader, `{"code":"nope","message":"x","status":404}`},
		{"error status differs", "DELETE", "/v1/store/orders/1", 404, jsonHeader, `{"code":"order_not_found","message":"x","status":400}`},
		{"plain-text error", "GET", "/v1/nowhere", 404, http.Header{"Content-Type": {"text/plain"}}, `not found`},
		{"unrouted request answered 200", "GET", "/v1/nowhere", 200, jsonHeader, `{}`},
		{"429 without Retry-After", "DELETE", "/v1/store/orders/1", 429, jsonHeader, `{"code":"rate_limit_exceeded","message":"x","status":429}`},
		{"no rate-limit headers on a 404 route", "GET", "/v1/nowhere", 404, jsonHeader, `{"code":"not_found","message":"x","status":404}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, "http://127.0.0.1:1"+tc.path, nil)
			res := &http.Response{StatusCode: tc.status, Header: tc.header}
			if err := c.Check(req, res, []byte(tc.body)); err == nil {
				t.Fatal("Check accepted an answer that breaks the contract")
			}
		})
	}
}
