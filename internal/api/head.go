package api

import "github.com/labstack/echo/v4"

// getAndHead registers every GET route for HEAD too, with the same handler and middleware:
// HEAD is answered as GET would be (same status, headers, limits and authentication), and
// Go's server drops the body, keeping the Content-Length of a body it had whole (RFC 9110
// §9.3.2). Everything but GET is registered as on echo itself.
type getAndHead struct{ *echo.Echo }

// GET registers path for GET and HEAD.
func (r getAndHead) GET(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	r.Echo.HEAD(path, h, m...)
	return r.Echo.GET(path, h, m...)
}
