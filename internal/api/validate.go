package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/order"
)

// hasInput reports whether the operation declares anything of a request to validate: a
// parameter (its own or its path's) or a body. Without security (admit's) and without the
// option to reject undeclared bodies, kin-openapi's ValidateRequest checks only these.
func hasInput(item *openapi3.PathItem, op *openapi3.Operation) bool {
	return len(op.Parameters) > 0 || len(item.Parameters) > 0 || op.RequestBody != nil
}

// validation checks requests against one operation, with kin-openapi, as its ValidateRequest
// would (the first error, the same one), without the work it does for parameters a request
// does not send. ValidateRequest checks security (none here: admit has checked it), then each
// parameter, then the body. Of a parameter it decodes, on every request, whatever is sent; an
// optional one that is absent (no key in the query, no header of its name) decodes to nothing,
// and nothing of it is checked. So a parameter is checked here when it is required, sent, or
// of a kind whose presence is not one key (path and cookie parameters, content, objects);
// an operation with a body is given to ValidateRequest whole. Beyond kin-openapi's checks, a
// single-valued query parameter must be sent once, and a date-time must be one RFC 3339
// allows (order.DateTimeFault): so that every value validation lets through is one the generated
// binding reads, and every refusal names its parameter.
type validation struct {
	route *routers.Route
	opts  *openapi3filter.Options
	// doc is the file name of the operation's document, which every refusal names.
	doc string
	// whole is an operation with a body.
	whole bool
	// params are the parameters, in ValidateRequest's order: the path's (unless the operation
	// declares one of the same name and place), then the operation's.
	params []parameterCheck
}

// parameterCheck is one parameter of an operation, and where a request sends it when an
// absent one is nothing to check.
type parameterCheck struct {
	*openapi3.Parameter
	// query is the query key, header the canonical header name, of an optional parameter of
	// the query or a header; both empty for one that is always checked.
	query, header string
	// single is a query parameter of one value, which a query sends once: any but an
	// exploded array (status=a&status=b).
	single bool
	// dateTime is a query parameter of format date-time, checked by order.DateTimeFault.
	dateTime bool
}

// newValidation prepares the checks of route's operation, of the document named doc;
// route.Operation is the one to check (without security).
func newValidation(route *routers.Route, opts *openapi3filter.Options, doc string) *validation {
	op := route.Operation
	v := &validation{route: route, opts: opts, doc: doc, whole: op.RequestBody != nil}
	for _, ref := range route.PathItem.Parameters {
		if p := ref.Value; p != nil && op.Parameters.GetByInAndName(p.In, p.Name) == nil {
			v.params = append(v.params, checkOf(p))
		}
	}
	for _, ref := range op.Parameters {
		if ref.Value != nil {
			v.params = append(v.params, checkOf(ref.Value))
		}
	}
	return v
}

func checkOf(p *openapi3.Parameter) parameterCheck {
	c := parameterCheck{Parameter: p}
	if p.In == openapi3.ParameterInQuery && p.Schema != nil && p.Schema.Value != nil {
		s := p.Schema.Value
		exploded := p.Explode == nil || *p.Explode // form's default
		c.single = !(s.Type.Is(openapi3.TypeArray) && exploded)
		c.dateTime = s.Type.Is(openapi3.TypeString) && s.Format == "date-time"
	}
	if p.Required || p.Content != nil || p.Schema == nil || p.Schema.Value == nil || p.Schema.Value.Type.Is(openapi3.TypeObject) {
		return c
	}
	switch {
	case p.In == openapi3.ParameterInQuery && (p.Style == "" || p.Style == openapi3.SerializationForm):
		c.query = p.Name
	case p.In == openapi3.ParameterInHeader:
		c.header = http.CanonicalHeaderKey(p.Name)
	}
	return c
}

// check returns the error ValidateRequest would return for r, whose path parameters are
// pathParams (unescaped) and whose query is query (nil when r has none).
func (v *validation) check(ctx context.Context, r *http.Request, pathParams map[string]string, query url.Values) error {
	input := func() *openapi3filter.RequestValidationInput {
		return &openapi3filter.RequestValidationInput{Request: r, PathParams: pathParams, QueryParams: query, Route: v.route, Options: v.opts}
	}
	if v.whole {
		return openapi3filter.ValidateRequest(ctx, input())
	}
	var in *openapi3filter.RequestValidationInput // made for the first parameter checked
	for i := range v.params {
		p := &v.params[i]
		switch {
		case p.query != "":
			if _, sent := query[p.query]; !sent {
				continue
			}
		case p.header != "":
			if _, sent := r.Header[p.header]; !sent {
				continue
			}
		}
		if in == nil {
			in = input()
		}
		if n := len(query[p.Name]); p.single && n > 1 {
			return &openapi3filter.RequestError{Input: in, Parameter: p.Parameter, Err: ruleError(fmt.Sprintf("given %d times; send it once", n))}
		}
		if err := openapi3filter.ValidateParameter(ctx, in, p.Parameter); err != nil {
			return err
		}
		if p.dateTime {
			if fault := order.DateTimeFault(query.Get(p.Name)); fault != "" {
				return &openapi3filter.RequestError{Input: in, Parameter: p.Parameter, Err: ruleError(fault)}
			}
		}
	}
	return nil
}

// ruleError is a parameter's value refused by a check of validation's own, not kin-openapi's:
// its text is the reason the client is told.
type ruleError string

func (e ruleError) Error() string { return string(e) }

// validateRequest checks the parameters of a routed request against its operation; a
// mismatch is answered 400 naming the parameter and the document (requestErrorMessage).
func validateRequest(v *validation) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			names, values := c.ParamNames(), c.ParamValues()
			var params map[string]string // none to make for a route without path parameters
			if len(names) > 0 {
				params = make(map[string]string, len(names))
			}
			for i, name := range names {
				v := values[i]             // one whole path segment: unmatched has checked it
				if req.URL.RawPath != "" { // echo leaves escapes in when the path had any
					if u, err := url.PathUnescape(v); err == nil {
						v = u
					}
				}
				params[name] = v
			}
			var query url.Values
			if req.URL.RawQuery != "" {
				query = c.QueryParams() // parsed once, for the handler's binding too
			}
			combineListHeaders(req.Header, v.route.Operation.Parameters)
			if err := v.check(req.Context(), req, params, query); err != nil {
				var re *openapi3filter.RequestError
				if errors.As(err, &re) {
					return &problem{http.StatusBadRequest, gen.ErrorCodeInvalidRequest, requestErrorMessage(re, v.doc)}
				}
				return err
			}
			err := next(c)
			if he := (*echo.HTTPError)(nil); errors.As(err, &he) && he.Code == http.StatusBadRequest {
				// The generated binding refused a value the checks let through: a rule of the
				// document they do not hold yet. Its text is not the service's to show.
				return &problem{http.StatusBadRequest, gen.ErrorCodeInvalidRequest, "the request does not meet the contract; see " + v.doc}
			}
			return err
		}
	}
}

// combineListHeaders joins the lines of a header parameter sent as several lines into one,
// with commas, as RFC 9110 (§5.3) lets a list header be sent and says to combine it: the
// parameters are validated and bound as one value.
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
