package api

import "github.com/labstack/echo/v4"

// routes registers the service's routes on echo, by two rules:
//
//   - every GET route is registered for HEAD too, with the same handler and middleware:
//     HEAD is answered as GET would be (same status, headers, limits and authentication),
//     and Go's server drops the body, keeping the Content-Length of a body it had whole
//     (RFC 9110 §9.3.2);
//   - a route's own middleware (an operation's validator) is applied to its handler once,
//     here: echo would apply it again on every request, a closure per step per request.
//
// The verbs it does not define are echo's own, which apply a route's middleware per request.
type routes struct{ *echo.Echo }

// GET registers path for GET and HEAD.
func (r routes) GET(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	h = applyMiddleware(h, m)
	r.Echo.HEAD(path, h)
	return r.Echo.GET(path, h)
}

// DELETE registers path for DELETE.
func (r routes) DELETE(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.Echo.DELETE(path, applyMiddleware(h, m))
}

// POST registers path for POST.
func (r routes) POST(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.Echo.POST(path, applyMiddleware(h, m))
}

// PUT registers path for PUT.
func (r routes) PUT(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.Echo.PUT(path, applyMiddleware(h, m))
}

// PATCH registers path for PATCH.
func (r routes) PATCH(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	return r.Echo.PATCH(path, applyMiddleware(h, m))
}

// applyMiddleware wraps h in m, m[0] outermost, as echo does.
func applyMiddleware(h echo.HandlerFunc, m []echo.MiddlewareFunc) echo.HandlerFunc {
	for i := len(m) - 1; i >= 0; i-- {
		h = m[i](h)
	}
	return h
}

// composeOnce returns the middleware for e.Use that runs chain, made once (m[0] outermost)
// around the routed handler. echo calls the middleware given to e.Use on every request, to
// wrap the handler it routed to; wrapping it there would allocate a closure per step per
// request. The handler echo routed to (the route's, or its 404 or 405) is the context's, so
// the chain made once ends by calling it.
func composeOnce(m ...echo.MiddlewareFunc) echo.MiddlewareFunc {
	chain := applyMiddleware(routed, m)
	return func(echo.HandlerFunc) echo.HandlerFunc { return chain }
}

// routed runs the handler echo routed the request to.
func routed(c echo.Context) error {
	return c.Handler()(c)
}
