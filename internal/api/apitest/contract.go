// Package apitest checks HTTP answers against openapi.yaml, so that every integration test,
// whatever it tests, also proves that the service never leaves its contract.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/petstore/orderd"
	"github.com/petstore/orderd/gen"
)

// RateLimitHeaders are the headers every answer under /v1 carries.
var RateLimitHeaders = []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit", "RateLimit-Policy"}

// Contract validates answers against the embedded openapi.yaml.
type Contract struct {
	doc    *openapi3.T
	router routers.Router
}

var (
	loadOnce sync.Once
	loaded   *Contract
	loadErr  error
)

// Load returns the contract, loaded once per test binary.
func Load(tb testing.TB) *Contract {
	tb.Helper()
	loadOnce.Do(func() {
		var doc *openapi3.T
		doc, loadErr = orderd.LoadOpenAPI()
		if loadErr != nil {
			return
		}
		// The document's servers are production URLs; a router built on them matches no
		// request made to a test server. Route on the path alone, under /v1.
		routed := *doc
		routed.Servers = openapi3.Servers{{URL: "/v1"}}
		var r routers.Router
		r, loadErr = gorillamux.NewRouter(&routed)
		loaded = &Contract{doc: doc, router: r}
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

// Check validates one answer: against its operation when the request names one, and against
// the Error schema when it names none (unknown route, unknown method).
func (c *Contract) Check(req *http.Request, res *http.Response, body []byte) error {
	if res.StatusCode >= 400 && req.Method != http.MethodHead {
		if err := c.checkError(res, body); err != nil {
			return err
		}
	}
	if p := req.URL.Path; p == "/v1" || strings.HasPrefix(p, "/v1/") {
		// Every answer under /v1 carries the rate-limit headers, also where no operation
		// of the document describes it (unknown routes and methods).
		for _, h := range RateLimitHeaders {
			if res.Header.Get(h) == "" {
				return errors.New("no " + h + " header")
			}
		}
		if res.StatusCode == http.StatusTooManyRequests && res.Header.Get("Retry-After") == "" {
			return errors.New("a 429 without Retry-After")
		}
	}
	route, params, err := c.router.FindRoute(req)
	if errors.Is(err, routers.ErrPathNotFound) || errors.Is(err, routers.ErrMethodNotAllowed) {
		switch res.StatusCode {
		case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusUnauthorized,
			http.StatusTooManyRequests, http.StatusServiceUnavailable:
		default:
			return errors.New("a request for no operation must be answered 401, 404, 405, 429 or 503")
		}
		return nil
	}
	if err != nil {
		return err
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 res.StatusCode,
		Header:                 res.Header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, ExcludeResponseBody: req.Method == http.MethodHead},
	}
	return openapi3filter.ValidateResponse(context.Background(), in)
}

func (c *Contract) checkError(res *http.Response, body []byte) error {
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return errors.New("an error must be application/json, not " + ct)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return err
	}
	if err := c.doc.Components.Schemas["Error"].Value.VisitJSON(v); err != nil {
		return err
	}
	var e gen.Error
	if err := json.Unmarshal(body, &e); err != nil {
		return err
	}
	if int(e.Status) != res.StatusCode {
		return errors.New("Error.status differs from the HTTP status")
	}
	return nil
}
