// Package contract checks HTTP answers against the embedded openapi.yaml. The tests use it on
// every answer they receive, and `orderd contract-check` on a deployed instance.
package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/petstore/orderd"
	"github.com/petstore/orderd/gen"
)

// RateLimitHeaders are the headers every answer under /v1 carries.
var RateLimitHeaders = []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit", "RateLimit-Policy"}

// Checker validates answers against the contract.
type Checker struct {
	doc      *openapi3.T
	router   routers.Router
	basePath string
}

// New returns a checker for answers of the API served at serverURL: "/v1" for any host, or
// an absolute URL such as https://api.example/v1. The document's own servers are production
// URLs, and a router built on them would match no request made anywhere else.
func New(serverURL string) (*Checker, error) {
	doc, err := orderd.LoadOpenAPI()
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return nil, err
	}
	routed := *doc
	routed.Servers = openapi3.Servers{{URL: serverURL}}
	r, err := gorillamux.NewRouter(&routed)
	if err != nil {
		return nil, err
	}
	return &Checker{doc: doc, router: r, basePath: strings.TrimSuffix(u.Path, "/")}, nil
}

// Check validates one answer: against its operation when the request names one, and against
// the Error schema when it names none (unknown route, unknown method). body is the decoded
// body.
func (c *Checker) Check(req *http.Request, res *http.Response, body []byte) error {
	if res.StatusCode >= 400 && req.Method != http.MethodHead {
		if err := c.checkError(res, body); err != nil {
			return err
		}
	}
	if p := req.URL.Path; p == c.basePath || strings.HasPrefix(p, c.basePath+"/") {
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
		// 500: the caller's key record is corrupt, which admission finds before routing matters.
		case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusUnauthorized,
			http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusServiceUnavailable:
		default:
			return errors.New("a request for no operation must be answered 401, 404, 405, 429, 500 or 503")
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

func (c *Checker) checkError(res *http.Response, body []byte) error {
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
		return errors.New("the status field of the Error differs from the HTTP status")
	}
	return nil
}
