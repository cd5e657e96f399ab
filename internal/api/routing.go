package api

import (
	"strings"

	"github.com/labstack/echo/v4"
)

// methodNotAllowed answers a known path with an unknown method 405, as the contract says,
// where echo would answer OPTIONS itself with a bare 204, and lists in Allow only the methods
// that work (echo's list starts with OPTIONS, which the service does not serve).
func methodNotAllowed(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		// echo sets this only when it found the path but not the method.
		if allow, ok := c.Get(echo.ContextKeyHeaderAllow).(string); ok && allow != "" {
			c.Response().Header().Set(echo.HeaderAllow, strings.TrimPrefix(allow, "OPTIONS, "))
			return echo.ErrMethodNotAllowed
		}
		return next(c)
	}
}
