package main

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/petstore/orderd/examples/client/orderclient"
)

// apiError describes an answer other than the one asked for. candidates are the generated
// per-status Error fields of the response, JSONDefault (every other status) included; at most
// one is set, the one of its status.
func apiError(res *http.Response, body []byte, candidates ...*orderclient.Error) error {
	for _, e := range candidates {
		if e != nil {
			return fmt.Errorf("%d %s: %s", res.StatusCode, e.Code, e.Message)
		}
	}
	// A body that is not an Error (a proxy in between, say): show a little of it rather than
	// nothing.
	text := strings.TrimSpace(string(body))
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	if text == "" {
		return fmt.Errorf("unexpected answer %s", res.Status)
	}
	return fmt.Errorf("unexpected answer %s: %s", res.Status, text)
}
