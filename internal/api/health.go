package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
)

// health serves /healthz (the process answers) and /readyz (its store answers too), outside
// /v1: no key, no limit, for load balancers and orchestrators.
func health(e *echo.Echo, ready func(context.Context) error) {
	e.GET("/healthz", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	})
	e.GET("/readyz", func(c echo.Context) error {
		if ready != nil {
			ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
			defer cancel()
			if err := ready(ctx); err != nil {
				c.Response().Header().Set("Retry-After", strconv.Itoa(retryAfterUnavailable))
				return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "not ready", "store": "unreachable"})
			}
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
	})
}
