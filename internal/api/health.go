package api

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/gen"
)

// health serves /healthz (the process answers) and /readyz (its store answers too), outside
// /v1: no key, no limit, for load balancers and orchestrators. Not ready is a 503 written
// by errorHandler, an Error object like every 5xx, with its Retry-After from observe's
// header hook. The cause is not logged here: a probe meets it every few seconds, and the
// outage log already warns of it.
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
				return &problem{http.StatusServiceUnavailable, gen.ErrorCodeServiceUnavailable, msgUnavailable}
			}
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
	})
}
