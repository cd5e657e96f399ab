package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/store"
)

// health serves /healthz (the process answers) and /readyz (its store answers too), outside
// /v1: no key, no limit, for load balancers and orchestrators. Not ready is a 503 written
// by errorHandler, an Error object like every 5xx, with its Retry-After from observe's
// header hook. The cause is not logged here: a probe meets it every few seconds, and the
// outage log, or the fault log when the store found a fault, already tells of it.
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
				// A fault that lasts is named, in words without paths: an operator reading
				// the probe's answer learns what to mend; the log line has the details.
				msg := msgUnavailable
				var fault *store.Fault
				if errors.As(err, &fault) {
					msg = "not ready: " + fault.Public
				}
				return &problem{http.StatusServiceUnavailable, gen.ErrorCodeServiceUnavailable, msg}
			}
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
	})
}
