package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/petstore/orderd/examples/client/orderclient"
)

// The documents let Error.code grow within a major version (docs/api-evolution.md): the
// generated client must read an answer with a code newer than itself, keep the code, and
// say only through Valid that it does not know it.
func TestAnErrorCodeNewerThanTheClientIsKept(t *testing.T) {
	res := &http.Response{
		StatusCode: http.StatusConflict,
		Status:     "409 Conflict",
		Header: http.Header{
			"Content-Type":          {"application/json"},
			"X-Request-Id":          {"r1"},
			"X-Ratelimit-Limit":     {"60"},
			"X-Ratelimit-Remaining": {"59"},
			"X-Ratelimit-Reset":     {"60"},
			"Ratelimit":             {`"default";r=59;t=60`},
			"Ratelimit-Policy":      {`"default";q=60;w=60`},
		},
		Body: io.NopCloser(strings.NewReader(`{"code":"order_frozen","message":"order 5 is frozen","status":409}`)),
	}
	parsed, err := orderclient.ParseCancelOrderResponse(res)
	if err != nil {
		t.Fatalf("the generated client refuses an unknown code: %v", err)
	}
	if parsed.JSON409 == nil || parsed.JSON409.Code != "order_frozen" || parsed.JSON409.Code.Valid() {
		t.Fatalf("JSON409 = %+v: want the code order_frozen kept, and not Valid", parsed.JSON409)
	}
	if got := apiError(res, parsed.Body, parsed.JSON409).Error(); got != "409 order_frozen: order 5 is frozen" {
		t.Errorf("apiError = %q", got)
	}
}
