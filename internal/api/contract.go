package api

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
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

// MaxHeaderBytes bounds a request's line and header fields: conform answers 431 for http.Server's 4 KiB past it.
const MaxHeaderBytes = 16 << 10

var errHeaderTooLarge = &problem{http.StatusRequestHeaderFieldsTooLarge, gen.ErrorCodeHeaderTooLarge,
	fmt.Sprintf("the request line and header fields exceed %d bytes", MaxHeaderBytes)}

// conform is the step after admit: 431, 404 whatever the method, 405 with Allow (OPTIONS too), 400.
func conform(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ex := c.Request().Context().(*exchange)
		switch allow := allowOf(c); {
		case headerBytes(ex.req) > MaxHeaderBytes:
			return errHeaderTooLarge
		case !matchesTemplate(c):
			return echo.ErrNotFound
		case allow != "":
			c.Response().Header().Set(echo.HeaderAllow, allow)
			return echo.ErrMethodNotAllowed
		case ex.op != nil && ex.op.validate != nil:
			if err := ex.op.validate(c, ex); err != nil {
				return err
			}
		}
		return next(c)
	}
}

// headerBytes is the size MaxHeaderBytes bounds; Go keeps Host and Transfer-Encoding apart.
func headerBytes(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + 2
	if r.Host != "" {
		n += len("Host: ") + len(r.Host) + 2
	}
	for _, te := range r.TransferEncoding {
		n += len("Transfer-Encoding: ") + len(te) + 2
	}
	for name, values := range r.Header {
		for _, v := range values {
			n += len(name) + 2 + len(v) + 2
		}
	}
	return n
}

// allowOf is the methods echo found the path serves when not the request's; "" else.
func allowOf(c echo.Context) string {
	allow, _ := c.Get(echo.ContextKeyHeaderAllow).(string)
	return strings.TrimPrefix(allow, "OPTIONS, ")
}

// matchesTemplate reports whether each parameter is one whole, non-empty segment: echo's last takes the rest.
func matchesTemplate(c echo.Context) bool {
	route, path := c.Path(), c.Request().URL.EscapedPath()
	return route == "" || strings.HasSuffix(route, "*") || strings.Count(route, "/") == strings.Count(path, "/") &&
		!strings.Contains(path, "//") && (strings.HasSuffix(route, "/") || !strings.HasSuffix(path, "/"))
}

// operation is what the documents of orderd.Versions say of one, built once.
type operation struct {
	label     string                              // for metrics: operationId, after version 1 prefixed ("v2.findOrders")
	public    bool                                // the security is empty: no key needed (still limited, by address)
	unlimited bool                                // public, and its 200 declares no rate-limit headers
	validate  func(echo.Context, *exchange) error // nil without parameters
}

// loadContract reads every version's operations, by method and echo route ("GET /v1/store/orders").
func loadContract() (map[string]*operation, error) {
	ops := map[string]*operation{}
	for i, v := range orderd.Versions {
		doc, err := v.Load()
		if err != nil {
			return nil, err
		}
		label := strings.Repeat(strings.TrimPrefix(v.Base, "/")+".", min(i, 1)) // "v2." after version 1
		for path, item := range doc.Paths.Map() {
			for method, op := range item.Operations() {
				o := &operation{label: label + op.OperationID}
				if o.public = op.Security != nil && len(*op.Security) == 0; o.public {
					ok := op.Responses.Status(http.StatusOK)
					o.unlimited = ok != nil && ok.Value != nil && ok.Value.Headers["X-RateLimit-Limit"] == nil
				}
				if len(op.Parameters) > 0 || len(item.Parameters) > 0 || op.RequestBody != nil {
					unsecured := *op // admit has authenticated the request: kin-openapi need not
					unsecured.Security = &openapi3.SecurityRequirements{}
					o.validate = validator(&routers.Route{Spec: doc, Path: path, PathItem: item, Method: method, Operation: &unsecured}, v.Name)
				}
				route := v.Base + strings.NewReplacer("{", ":", "}", "").Replace(path)
				ops[method+" "+route] = o
				if method == http.MethodGet { // answered for HEAD too (routes)
					ops[http.MethodHead+" "+route] = o
				}
			}
		}
	}
	return ops, nil
}

// validator checks a request by ValidateRequest and ownRules: what it passes, the binding reads.
func validator(route *routers.Route, doc string) func(echo.Context, *exchange) error {
	opts := &openapi3filter.Options{SkipSettingDefaults: true} // the find's Link repeats the query as sent
	params := append(slices.Clone(route.PathItem.Parameters), route.Operation.Parameters...)
	var seen *passed
	if route.Operation.RequestBody == nil && !slices.ContainsFunc(params, func(p *openapi3.ParameterRef) bool {
		return p.Value == nil || p.Value.In == openapi3.ParameterInCookie
	}) {
		seen = &passed{inputs: map[string]struct{}{}}
	}
	return func(c echo.Context, ex *exchange) error {
		req := ex.req
		var buf [512]byte
		input := appendInput(buf[:0], req, params)
		if seen != nil && seen.has(input) {
			return nil
		}
		pathParams := map[string]string{}
		for i, name := range c.ParamNames() {
			pathParams[name] = c.ParamValues()[i] // one whole segment (conform), in which echo leaves escapes
			if u, err := url.PathUnescape(pathParams[name]); req.URL.RawPath != "" && err == nil {
				pathParams[name] = u
			}
		}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: pathParams,
			QueryParams: c.QueryParams(), Route: route, Options: opts}
		err := ownRules(in, params, doc, true)
		if err == nil {
			err = openapi3filter.ValidateRequest(req.Context(), in)
		}
		if err == nil {
			err = ownRules(in, params, doc, false)
		}
		if re := (*openapi3filter.RequestError)(nil); errors.As(err, &re) {
			msg := "invalid request: " + re.Error()
			if p := re.Parameter; p != nil { // what it must be
				msg = fmt.Sprintf("%s parameter %s: %s", p.In, p.Name, expectation(p, re.Err))
			}
			return &problem{http.StatusBadRequest, gen.ErrorCodeInvalidRequest, msg + "; see " + doc}
		} else if err == nil && seen != nil {
			seen.add(input)
		}
		return err
	}
}

// passed remembers the inputs of one operation that validation passed, at most maxPassed.
type passed struct {
	mu     sync.RWMutex
	inputs map[string]struct{}
}

const maxPassed = 4096

func (p *passed) has(input []byte) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	_, ok := p.inputs[string(input)] // no copy for a lookup
	return ok
}

func (p *passed) add(input []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.inputs) >= maxPassed {
		clear(p.inputs)
	}
	p.inputs[string(input)] = struct{}{}
}

// appendInput appends all that validation reads, each part after its length; a header's lines joined (RFC 9110 §5.3).
func appendInput(b []byte, r *http.Request, params openapi3.Parameters) []byte {
	part := func(b []byte, s string) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	b = part(part(part(b, r.URL.Path), r.URL.RawPath), r.URL.RawQuery)
	for _, ref := range params {
		if p := ref.Value; p != nil && p.In == openapi3.ParameterInHeader {
			name := http.CanonicalHeaderKey(p.Name)
			if v := r.Header[name]; len(v) > 1 {
				r.Header[name] = []string{strings.Join(v, ", ")}
			}
			if v := r.Header[name]; len(v) > 0 {
				b = part(append(b, 1), v[0])
			} else {
				b = append(b, 0)
			}
		}
	}
	return b
}

// ownRules checks, before ValidateRequest, that a single value is sent once; after, a date-time.
func ownRules(in *openapi3filter.RequestValidationInput, params openapi3.Parameters, doc string, before bool) error {
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
			return &problem{http.StatusBadRequest, gen.ErrorCodeInvalidRequest, fmt.Sprintf("%s parameter %s: %s; see %s", p.In, p.Name, fault, doc)}
		}
	}
	return nil
}

// expectation says what the parameter must be; for a string, by the rule it broke.
func expectation(p *openapi3.Parameter, cause error) string {
	if p.Schema == nil || p.Schema.Value == nil {
		return "invalid value"
	}
	s := p.Schema.Value
	switch {
	case s.Type.Is(openapi3.TypeInteger):
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		// The document's bounds are float64s; one at the edge of int64 does not convert back.
		if s.Min != nil && *s.Min > math.MinInt64 {
			lo = int64(*s.Min)
		}
		if s.Max != nil && *s.Max < math.MaxInt64 {
			hi = int64(*s.Max)
		}
		return fmt.Sprintf("must be an integer from %d to %d", lo, hi)
	case s.Type.Is(openapi3.TypeString):
		var se *openapi3.SchemaError
		errors.As(cause, &se)
		switch {
		case se != nil && se.SchemaField == "pattern" && s.Pattern != "":
			return "must match the pattern " + s.Pattern
		case s.Format == "date-time" && (se == nil || se.SchemaField != "maxLength"):
			return order.DateTimeShape
		case s.MaxLength != nil && s.MinLength > 0:
			return fmt.Sprintf("must be a string of %d to %d characters", s.MinLength, *s.MaxLength)
		case s.MaxLength != nil:
			return fmt.Sprintf("must be a string of at most %d characters", *s.MaxLength)
		}
	case s.Type.Is(openapi3.TypeArray) && s.Items != nil && s.Items.Value != nil && len(s.Items.Value.Enum) > 0:
		words := make([]string, 0, len(s.Items.Value.Enum))
		for _, w := range s.Items.Value.Enum {
			words = append(words, fmt.Sprint(w))
		}
		msg := "each value must be one of " + strings.Join(words, ", ")
		if s.MaxItems != nil {
			msg += fmt.Sprintf(", at most %d values", *s.MaxItems)
		}
		return msg
	}
	return "must be " + strings.Join(s.Type.Slice(), " or ")
}
