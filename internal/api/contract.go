package api

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd"
	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/order"
)

// contract is what the documents of orderd.Versions say of each operation, built once.
type contract struct {
	bases      []string                                    // oldest first: "/v1", "/v2"
	operations map[string]*operation                       // by method and echo route: "GET /v1/store/orders"
	validators map[string]map[string][]echo.MiddlewareFunc // by base, then operationId
}

type operation struct {
	label     string // for metrics: operationId, after version 1 prefixed ("v2.findOrders")
	public    bool   // the security is empty: no key needed (still limited, by address)
	unlimited bool   // public, and its 200 declares no rate-limit headers
}

// loadContract reads every version's document; echo routes, not kin-openapi's router.
func loadContract() (*contract, error) {
	ct := &contract{operations: map[string]*operation{}, validators: map[string]map[string][]echo.MiddlewareFunc{}}
	for i, v := range orderd.Versions {
		doc, err := v.Load()
		if err != nil {
			return nil, err
		}
		label := ""
		if i > 0 {
			label = strings.TrimPrefix(v.Base, "/") + "."
		}
		ct.bases = append(ct.bases, v.Base)
		ct.validators[v.Base] = map[string][]echo.MiddlewareFunc{}
		for path, item := range doc.Paths.Map() {
			for method, op := range item.Operations() {
				o := &operation{label: label + op.OperationID}
				if op.Security != nil && len(*op.Security) == 0 {
					ok := op.Responses.Status(http.StatusOK)
					o.public = true
					o.unlimited = ok != nil && ok.Value != nil && ok.Value.Headers["X-RateLimit-Limit"] == nil
				}
				route := v.Base + echoPath(path)
				ct.operations[method+" "+route] = o
				if method == http.MethodGet { // answered for HEAD too (routes)
					ct.operations[http.MethodHead+" "+route] = o
				}
				if len(op.Parameters) == 0 && len(item.Parameters) == 0 && op.RequestBody == nil {
					continue
				}
				// admit has authenticated the request: kin-openapi need not.
				unsecured := *op
				unsecured.Security = &openapi3.SecurityRequirements{}
				r := &routers.Route{Spec: doc, Path: path, PathItem: item, Method: method, Operation: &unsecured}
				ct.validators[v.Base][op.OperationID] = []echo.MiddlewareFunc{validator(r, v.Name)}
			}
		}
	}
	return ct, nil
}

// underBase reports whether path is under a version's base, where requests are admitted.
func (ct *contract) underBase(path string) bool {
	for _, base := range ct.bases {
		if path == base || strings.HasPrefix(path, base+"/") {
			return true
		}
	}
	return false
}

// operationAt is the operation of the request's route and method, or nil.
func (ct *contract) operationAt(c echo.Context) *operation {
	return ct.operations[c.Request().Method+" "+c.Path()]
}

// labelOf is the metrics label of the request whose operation is op: its label, the route for
// the routes outside the versions (/healthz, /docs…), else "unknown".
func (ct *contract) labelOf(c echo.Context, op *operation) string {
	if op != nil {
		return op.label
	}
	if p := c.Path(); p != "" && p != "/*" && !ct.underBase(p) {
		return p
	}
	return "unknown"
}

// echoPath turns /store/orders/{orderId} into /store/orders/:orderId.
var echoPath = strings.NewReplacer("{", ":", "}", "").Replace

// validator checks a request by kin-openapi's ValidateRequest and ownRules, so that every value
// it passes is one the binding reads; a 400 names its parameter and doc, the document.
func validator(route *routers.Route, doc string) echo.MiddlewareFunc {
	// Without defaults written into the query: the find's Link repeats the query as sent.
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, SkipSettingDefaults: true}
	params := append(slices.Clone(route.PathItem.Parameters), route.Operation.Parameters...)
	var seen *passed
	if route.Operation.RequestBody == nil && !slices.ContainsFunc(params, inCookie) {
		seen = &passed{inputs: map[string]struct{}{}}
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			combineListHeaders(req.Header, params)
			var buf [512]byte
			var input []byte
			if seen != nil {
				input = appendInput(buf[:0], req, params)
				if seen.has(input) {
					return callHandler(next, c, doc)
				}
			}
			pathParams := map[string]string{}
			for i, name := range c.ParamNames() {
				v := c.ParamValues()[i]    // one whole segment (unmatched)
				if req.URL.RawPath != "" { // echo leaves escapes in
					if u, err := url.PathUnescape(v); err == nil {
						v = u
					}
				}
				pathParams[name] = v
			}
			in := &openapi3filter.RequestValidationInput{Request: req, PathParams: pathParams,
				QueryParams: c.QueryParams(), Route: route, Options: opts}
			err := ownRules(in, params, true)
			if err == nil {
				err = openapi3filter.ValidateRequest(req.Context(), in)
			}
			if err == nil {
				err = ownRules(in, params, false)
			}
			if re := (*openapi3filter.RequestError)(nil); errors.As(err, &re) {
				return &problem{http.StatusBadRequest, gen.ErrorCodeInvalidRequest, requestErrorMessage(re, doc)}
			} else if err != nil {
				return err
			}
			if seen != nil {
				seen.add(input)
			}
			return callHandler(next, c, doc)
		}
	}
}

func inCookie(p *openapi3.ParameterRef) bool {
	return p.Value == nil || p.Value.In == openapi3.ParameterInCookie
}

func callHandler(next echo.HandlerFunc, c echo.Context, doc string) error {
	err := next(c)
	if he := (*echo.HTTPError)(nil); errors.As(err, &he) && he.Code == http.StatusBadRequest {
		// The binding refused what validation passed: its text is not ours to show.
		return &problem{http.StatusBadRequest, gen.ErrorCodeInvalidRequest, "the request does not meet the contract; see " + doc}
	}
	return err
}

// passed remembers the inputs of one operation's requests that validation passed: the check
// is a function of them alone, and was the largest cost of a small answer.
// At most maxPassed, forgotten all at once when full.
type passed struct {
	mu     sync.RWMutex
	inputs map[string]struct{}
}

const maxPassed = 4096

func (p *passed) has(input []byte) bool {
	p.mu.RLock()
	_, ok := p.inputs[string(input)] // no copy for a lookup
	p.mu.RUnlock()
	return ok
}

func (p *passed) add(input []byte) {
	p.mu.Lock()
	if len(p.inputs) >= maxPassed {
		clear(p.inputs)
	}
	p.inputs[string(input)] = struct{}{}
	p.mu.Unlock()
}

// appendInput appends all that validation reads of a request without a body, each part after
// its length: the path (its parameters), the query as sent, and each header parameter's
// value, or its absence.
func appendInput(b []byte, r *http.Request, params openapi3.Parameters) []byte {
	part := func(b []byte, s string) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	b = part(part(part(b, r.URL.Path), r.URL.RawPath), r.URL.RawQuery)
	for _, ref := range params {
		if p := ref.Value; p != nil && p.In == openapi3.ParameterInHeader {
			if v, ok := r.Header[http.CanonicalHeaderKey(p.Name)]; ok && len(v) > 0 {
				b = part(append(b, 1), v[0]) // one line, after combineListHeaders
			} else {
				b = append(b, 0)
			}
		}
	}
	return b
}

// ownRules checks the query: before ValidateRequest, that a single value is sent once (the
// binding would read the first); after it, a date-time by order.DateTimeFault.
func ownRules(in *openapi3filter.RequestValidationInput, params openapi3.Parameters, before bool) error {
	for _, ref := range params {
		p := ref.Value
		if p == nil || p.In != openapi3.ParameterInQuery || p.Schema == nil || p.Schema.Value == nil {
			continue
		}
		s, values := p.Schema.Value, in.QueryParams[p.Name]
		fault := ""
		switch {
		case before && len(values) > 1 && !(s.Type.Is(openapi3.TypeArray) && (p.Explode == nil || *p.Explode)):
			fault = fmt.Sprintf("given %d times; send it once", len(values))
		case !before && len(values) > 0 && s.Format == "date-time":
			fault = order.DateTimeFault(values[0])
		}
		if fault != "" {
			return &openapi3filter.RequestError{Input: in, Parameter: p, Err: ruleError(fault)}
		}
	}
	return nil
}

// ruleError is ownRules' refusal; its text is what the client is told.
type ruleError string

func (e ruleError) Error() string { return string(e) }

// combineListHeaders joins a header parameter's lines with commas (RFC 9110 §5.3): one value.
func combineListHeaders(h http.Header, params openapi3.Parameters) {
	for _, ref := range params {
		if p := ref.Value; p != nil && p.In == openapi3.ParameterInHeader {
			name := http.CanonicalHeaderKey(p.Name)
			if v := h[name]; len(v) > 1 {
				h[name] = []string{strings.Join(v, ", ")}
			}
		}
	}
}
