package api

import (
	"fmt"
	"math"
	"net/url"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"
)

// validators returns, for each operationId of doc, a middleware that validates the request
// against the operation. Echo has already routed the request, so the operation is known and
// kin-openapi's router (which would match the document's production server URLs, not the
// address the service is reached at) is not needed.
func validators(doc *openapi3.T) map[string][]echo.MiddlewareFunc {
	opts := &openapi3filter.Options{
		// Authentication ran earlier in the chain, as decisions.md orders it.
		AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
	}
	out := map[string][]echo.MiddlewareFunc{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			// Authentication ran before routing; a copy of the operation without security
			// keeps kin-openapi from checking it again on every request.
			unsecured := *op
			unsecured.Security = &openapi3.SecurityRequirements{}
			route := &routers.Route{Spec: doc, Path: path, PathItem: item, Method: method, Operation: &unsecured}
			out[op.OperationID] = []echo.MiddlewareFunc{validateRequest(route, opts)}
		}
	}
	return out
}

func validateRequest(route *routers.Route, opts *openapi3filter.Options) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			names, values := c.ParamNames(), c.ParamValues()
			params := make(map[string]string, len(names))
			for i, name := range names {
				v := values[i]
				if strings.Contains(v, "/") {
					// echo's last parameter takes the rest of the path, slashes and all
					// (/store/orders/1/ gives "1/"); by the document's path templates such
					// a path names no operation.
					return echo.ErrNotFound
				}
				if c.Request().URL.RawPath != "" { // echo leaves escapes in when the path had any
					if u, err := url.PathUnescape(v); err == nil {
						v = u
					}
				}
				params[name] = v
			}
			in := &openapi3filter.RequestValidationInput{
				Request:    c.Request(),
				PathParams: params,
				Route:      route,
				Options:    opts,
			}
			if err := openapi3filter.ValidateRequest(c.Request().Context(), in); err != nil {
				return err
			}
			return next(c)
		}
	}
}

// requestErrorMessage names the parameter and says what it must be, in words that do not
// depend on kin-openapi's own messages.
func requestErrorMessage(re *openapi3filter.RequestError) string {
	if re.Parameter == nil {
		return "invalid request: " + re.Error()
	}
	p := re.Parameter
	return fmt.Sprintf("%s parameter %s: %s", p.In, p.Name, expectation(p))
}

func expectation(p *openapi3.Parameter) string {
	if p.Schema == nil || p.Schema.Value == nil {
		return "invalid value"
	}
	s := p.Schema.Value
	switch {
	case s.Type.Is(openapi3.TypeInteger):
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		if s.Format == "int32" {
			lo, hi = math.MinInt32, math.MaxInt32
		}
		// The document's bounds are float64s; one at the edge of int64 does not convert back.
		if s.Min != nil && *s.Min > math.MinInt64 {
			lo = int64(*s.Min)
		}
		if s.Max != nil && *s.Max < math.MaxInt64 {
			hi = int64(*s.Max)
		}
		return fmt.Sprintf("must be an integer from %d to %d", lo, hi)
	case s.Type.Is(openapi3.TypeString) && s.MaxLength != nil:
		return fmt.Sprintf("must be a string of at most %d characters", *s.MaxLength)
	}
	return "must be " + strings.Join(s.Type.Slice(), " or ")
}
