// Package apitest makes every integration test also a contract test: Do sends a request and
// fails the test when the answer leaves openapi.yaml.
package apitest

import (
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/petstore/orderd/internal/contract"
)

// Contract checks answers of a test server against openapi.yaml.
type Contract struct{ *contract.Checker }

var (
	loadOnce sync.Once
	loaded   *Contract
	loadErr  error
)

// Load returns the contract, loaded once per test binary, for servers at any address.
func Load(tb testing.TB) *Contract {
	tb.Helper()
	loadOnce.Do(func() {
		var c *contract.Checker
		c, loadErr = contract.New("/v1")
		loaded = &Contract{c}
	})
	if loadErr != nil {
		tb.Fatalf("loading openapi.yaml: %v", loadErr)
	}
	return loaded
}

// Do sends req with client, checks the answer against the contract, and returns it with its
// body read. Any deviation fails the test.
func (c *Contract) Do(tb testing.TB, client *http.Client, req *http.Request) (*http.Response, []byte) {
	tb.Helper()
	res, err := client.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		tb.Fatalf("%s %s: reading body: %v", req.Method, req.URL, err)
	}
	if err := c.Check(req, res, body); err != nil {
		tb.Errorf("%s %s → %d breaks the contract: %v\nbody: %s", req.Method, req.URL.RequestURI(), res.StatusCode, err, body)
	}
	return res, body
}
