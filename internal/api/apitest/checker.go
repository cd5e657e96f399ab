// Package contract checks HTTP answers against an embedded document of the API. The tests use
// it on every answer they receive, and `orderd contract-check` on a deployed instance.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/petstore/orderd"
	"github.com/petstore/orderd/gen"
)

// RequestIDHeader is the header every answer carries, under /v1 or not.
const RequestIDHeader = "X-Request-Id"

// RateLimitHeaders are the headers every answer under a version's base (/v1, /v2) carries.
var RateLimitHeaders = []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit", "RateLimit-Policy"}

// Checker validates answers against the contract.
type Checker struct {
	doc      *openapi3.T
	router   routers.Router
	basePath string
	statusOf map[gen.ErrorCode]int // as the document's examples (one per code) show it
}

// New returns a checker for version 1 served at serverURL: "/v1", or an absolute URL.
func New(serverURL string) (*Checker, error) {
	return NewVersion(orderd.Versions[0], serverURL)
}

// NewVersion returns a checker for answers of version v of the API served at serverURL.
func NewVersion(v orderd.Version, serverURL string) (*Checker, error) {
	doc, err := v.Load()
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
	// Each version's document shows the error codes its own operations answer, and the
	// versions share one Error: a code's status is shown by whichever version sends it.
	statusOf := map[gen.ErrorCode]int{}
	for _, ver := range orderd.Versions {
		d, err := ver.Load()
		if err != nil {
			return nil, err
		}
		for _, ex := range d.Components.Examples {
			e, _ := ex.Value.Value.(map[string]any)
			code, _ := e["code"].(string)
			status, _ := e["status"].(float64)
			if code != "" && status != 0 {
				statusOf[gen.ErrorCode(code)] = int(status)
			}
		}
	}
	for _, code := range doc.Components.Schemas["Error"].Value.Properties["code"].Value.Enum {
		if _, ok := statusOf[gen.ErrorCode(code.(string))]; !ok {
			return nil, fmt.Errorf("%s: no example in components/examples shows the error code %s", v.Name, code)
		}
	}
	return &Checker{doc: doc, router: r, basePath: strings.TrimSuffix(u.Path, "/"), statusOf: statusOf}, nil
}

// Check validates one answer, whose decoded body is body, against its operation if any, and
// errors against the Error schema.
func (c *Checker) Check(req *http.Request, res *http.Response, body []byte) error {
	if res.Header.Get(RequestIDHeader) == "" {
		return errors.New("no " + RequestIDHeader + " header")
	}
	if res.StatusCode >= 400 && req.Method != http.MethodHead {
		if err := c.checkError(res, body); err != nil {
			return err
		}
	}
	// HEAD is answered as GET without a body wherever GET is served, as the document says.
	routed := req
	if req.Method == http.MethodHead {
		routed = req.Clone(req.Context())
		routed.Method = http.MethodGet
	}
	route, params, err := c.router.FindRoute(routed)
	if preflight(req) && res.StatusCode == http.StatusNoContent {
		return checkPreflight(req, res, err)
	}
	limited := err != nil || rateLimited(route.Operation)
	underBase := req.URL.Path == c.basePath || strings.HasPrefix(req.URL.Path, c.basePath+"/")
	// Every answer under the base carries the rate-limit headers, unknown routes included,
	// but for operations the document says are not limited, which carry none.
	for _, h := range RateLimitHeaders {
		switch has := res.Header.Get(h) != ""; {
		case limited && underBase && !has:
			return errors.New("no " + h + " header")
		case !limited && has:
			return errors.New("a rate-limit header " + h + " on an operation that is not rate limited")
		}
	}
	// A refused stream says nothing of when a place frees (openapi-v2.yaml, listEvents); a HEAD
	// of one, without a body, does not say which 429 it is.
	switch retry := res.Header.Get("Retry-After") != ""; {
	case !limited || !underBase || res.StatusCode != http.StatusTooManyRequests:
	case req.Method == http.MethodHead && strings.HasSuffix(req.URL.Path, "/store/events"):
	case bytes.Contains(body, []byte(`"too_many_streams"`)) && retry:
		return errors.New("a 429 too_many_streams with Retry-After")
	case !bytes.Contains(body, []byte(`"too_many_streams"`)) && !retry:
		return errors.New("a 429 without Retry-After")
	}
	switch {
	case errors.Is(err, routers.ErrPathNotFound) && !underBase:
		return nil // outside the base (health, metrics, /docs) only what is checked above is contract
	case errors.Is(err, routers.ErrPathNotFound) || errors.Is(err, routers.ErrMethodNotAllowed):
		// 500: a corrupt key record, found before routing; 431: the header limit, at every path.
		if !slices.Contains([]int{401, 404, 405, 429, 431, 500, 503}, res.StatusCode) {
			return errors.New("a request for no operation must be answered 401, 404, 405, 429, 431, 500 or 503")
		}
		return nil
	case err != nil:
		return err
	}
	text := textSchema(route.Operation, res)
	if text != nil && req.Method != http.MethodHead {
		if err := text.VisitJSON(string(body)); err != nil {
			return fmt.Errorf("the text body: %w", err)
		}
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: routed, PathParams: params, Route: route},
		Status:                 res.StatusCode,
		Header:                 res.Header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true,
			ExcludeResponseBody: req.Method == http.MethodHead || text != nil},
	}
	return openapi3filter.ValidateResponse(context.Background(), in)
}

// preflight reports whether req is a browser's CORS preflight: OPTIONS, Origin and the method.
func preflight(req *http.Request) bool {
	return req.Method == http.MethodOptions && req.Header.Get("Origin") != "" &&
		req.Header.Get("Access-Control-Request-Method") != ""
}

// checkPreflight checks the 204 answering a preflight, outside every operation (the documents'
// "Browsers (CORS)"): to a path of the document (routing OPTIONS finds the path, not the
// method), for the origin that asked, and free, so without the rate-limit headers.
func checkPreflight(req *http.Request, res *http.Response, routeErr error) error {
	switch {
	case !errors.Is(routeErr, routers.ErrMethodNotAllowed):
		return fmt.Errorf("a preflight answered 204 for no path of the document: %v", routeErr)
	case res.Header.Get("Access-Control-Allow-Origin") != req.Header.Get("Origin"):
		return errors.New("a preflight's 204 without Access-Control-Allow-Origin: the request's Origin")
	case res.Header.Get("Access-Control-Allow-Methods") == "":
		return errors.New("a preflight's 204 without Access-Control-Allow-Methods")
	case !varies(res.Header, "Origin"):
		return errors.New("a preflight's 204 without Vary: Origin")
	case res.Header.Get("Access-Control-Allow-Credentials") != "":
		return errors.New("Access-Control-Allow-Credentials: the API takes keys, not cookies")
	}
	for _, h := range RateLimitHeaders {
		if res.Header.Get(h) != "" {
			return errors.New("a preflight is not rate limited, yet its 204 carries " + h)
		}
	}
	return nil
}

// varies reports whether Vary names field, on any of its lines.
func varies(h http.Header, field string) bool {
	for _, line := range h.Values("Vary") {
		for name := range strings.SplitSeq(line, ",") {
			if strings.EqualFold(strings.TrimSpace(name), field) {
				return true
			}
		}
	}
	return false
}

// rateLimited reports whether the operation's 200 answer declares the rate-limit headers.
func rateLimited(op *openapi3.Operation) bool {
	ok := op.Responses.Status(http.StatusOK)
	return ok == nil || ok.Value == nil || ok.Value.Headers[RateLimitHeaders[0]] != nil
}

// textSchema is the schema of an answer declared `type: string` in a media type other than
// JSON (the served YAML), or nil: checked as a string, as kin-openapi would decode YAML first.
func textSchema(op *openapi3.Operation, res *http.Response) *openapi3.Schema {
	ref := op.Responses.Status(res.StatusCode)
	if ref == nil {
		ref = op.Responses.Default()
	}
	if ref == nil || ref.Value == nil {
		return nil
	}
	ct, _, err := mime.ParseMediaType(res.Header.Get("Content-Type"))
	if err != nil || strings.HasSuffix(ct, "json") {
		return nil
	}
	mt := ref.Value.Content.Get(ct)
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil || !mt.Schema.Value.Type.Is(openapi3.TypeString) {
		return nil
	}
	return mt.Schema.Value
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
	if want := c.statusOf[e.Code]; want != res.StatusCode {
		return fmt.Errorf("the error code %s is answered %d, not %d", e.Code, want, res.StatusCode)
	}
	return nil
}
