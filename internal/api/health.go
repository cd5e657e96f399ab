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

// health serves /healthz (the process answers) and /readyz (its store answers too), without
// key or limit. Not ready is a 503 Error, as every 5xx. Its cause is not logged: a probe meets
// it every few seconds, and the store's outage or fault log already tells of it.
func health(e routes, ready func(context.Context) error) {
	e.GET("/healthz", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	})
	e.GET("/readyz", func(c echo.Context) error {
		if ready != nil {
			ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
			defer cancel()
			if err := ready(ctx); err != nil {
				// A lasting fault is named, without paths: the operator learns what to mend.
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
