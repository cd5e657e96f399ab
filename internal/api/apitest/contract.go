// Package apitest makes every integration test also a contract test: Do fails the test when
// the answer leaves its version's document (openapi.yaml outside every version).
package apitest

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/petstore/orderd"
)

// Contract checks answers of a test server against the document of each version.
type Contract struct {
	versions []*Checker // of orderd.Versions, in its order
}

var load = sync.OnceValues(func() (*Contract, error) {
	c := &Contract{}
	for _, v := range orderd.Versions {
		ch, err := NewVersion(v, v.Base) // for servers at any address
		if err != nil {
			return nil, err
		}
		c.versions = append(c.versions, ch)
	}
	return c, nil
})

// Load returns the contract, loaded once per test binary.
func Load(tb testing.TB) *Contract {
	tb.Helper()
	c, err := load()
	if err != nil {
		tb.Fatalf("loading the documents: %v", err)
	}
	return c
}

// Check validates one answer against its version's document (version 1's outside them all).
func (c *Contract) Check(req *http.Request, res *http.Response, body []byte) error {
	for i, v := range orderd.Versions {
		if p := req.URL.Path; p == v.Base || strings.HasPrefix(p, v.Base+"/") {
			return c.versions[i].Check(req, res, body)
		}
	}
	return c.versions[0].Check(req, res, body)
}

// Do sends req with client and returns the answer, its body read; a deviation fails the test.
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
