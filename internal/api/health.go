package api

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// health serves /healthz (the process answers) and /readyz (its store answers too), outside
// /v1: no key, no limit, for load balancers and orchestrators. A 503 gets its Retry-After
// from observe's header hook, like every 503.
func health(e interface {
	GET(string, echo.HandlerFunc, ...echo.MiddlewareFunc) *echo.Route
}, ready func(context.Context) error) {
	e.GET("/healthz", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	})
	e.GET("/readyz", func(c echo.Context) error {
		if ready != nil {
			ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
			defer cancel()
			if err := ready(ctx); err != nil {
				return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "not ready", "store": "unreachable"})
			}
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
	})
}
