package api

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/store"
)

// problem is an answer given as an Error object. Handlers and middleware return it (or a
// domain error) as an error; errorHandler is the one place that renders it.
type problem struct {
	status  int
	code    gen.ErrorCode
	message string
}

func (p *problem) Error() string { return fmt.Sprintf("%d %s: %s", p.status, p.code, p.message) }

// errSunset is returned for the deprecated operation after its sunset date.
var errSunset = errors.New("GET /pets/{petId} was retired on its sunset date; see the Link header")

// Messages for the answers whose cause must not reach the client.
const (
	msgInternal    = "internal error"
	msgUnavailable = "the order store cannot be reached; retry after the time in Retry-After"
)

// errorTable maps domain errors to HTTP. The message of these answers is the error's own text,
// which the service composes itself and so never carries internals.
var errorTable = []struct {
	err    error
	status int
	code   gen.ErrorCode
}{
	{order.ErrNotFound, http.StatusNotFound, gen.ErrorCodeOrderNotFound},
	{order.ErrAlreadyShipped, http.StatusConflict, gen.ErrorCodeOrderAlreadyShipped},
	{order.ErrPetNotFound, http.StatusNotFound, gen.ErrorCodePetNotFound},
	{auth.ErrNoCredentials, http.StatusUnauthorized, gen.ErrorCodeUnauthorized},
	{auth.ErrMalformed, http.StatusUnauthorized, gen.ErrorCodeUnauthorized},
	{auth.ErrUnknownKey, http.StatusUnauthorized, gen.ErrorCodeUnauthorized},
	{errSunset, http.StatusGone, gen.ErrorCodeEndpointSunset},
}

// retryAfterUnavailable is the Retry-After of a 503, in seconds: long enough for a failover,
// short enough that clients come back soon after the store does.
const retryAfterUnavailable = 5

// problemFor turns any error into the answer the client gets.
func problemFor(err error) *problem {
	var p *problem
	if errors.As(err, &p) {
		return p
	}
	for _, row := range errorTable {
		if errors.Is(err, row.err) {
			return &problem{row.status, row.code, err.Error()}
		}
	}
	if errors.Is(err, store.ErrUnavailable) {
		return &problem{http.StatusServiceUnavailable, gen.ErrorCodeServiceUnavailable, msgUnavailable}
	}
	var re *openapi3filter.RequestError
	if errors.As(err, &re) {
		return &problem{http.StatusBadRequest, gen.ErrorCodeInvalidRequest, requestErrorMessage(re)}
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return httpErrorProblem(he)
	}
	return &problem{http.StatusInternalServerError, gen.ErrorCodeInternalError, msgInternal}
}

// httpErrorProblem maps echo's own errors: routing, and binding (which request validation
// makes unreachable, but the text of which is not a contract to parse).
func httpErrorProblem(he *echo.HTTPError) *problem {
	switch {
	case he.Code == http.StatusNotFound:
		return &problem{http.StatusNotFound, gen.ErrorCodeNotFound, "no such resource"}
	case he.Code == http.StatusMethodNotAllowed:
		return &problem{http.StatusMethodNotAllowed, gen.ErrorCodeMethodNotAllowed, "method not allowed on this resource; see the Allow header"}
	case he.Code >= 400 && he.Code < 500:
		return &problem{http.StatusBadRequest, gen.ErrorCodeInvalidRequest, "the request does not meet the contract in openapi.yaml"}
	}
	return &problem{http.StatusInternalServerError, gen.ErrorCodeInternalError, msgInternal}
}

// errorBody is the Error object of err, for handlers that answer with a typed response.
func errorBody(err error) gen.Error {
	p := problemFor(err)
	return gen.Error{Code: p.code, Message: p.message, Status: int32(p.status)}
}

// errorHandler renders every error that reaches echo, from handlers, middleware, the router
// or a recovered panic, as an Error object.
func errorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		p := problemFor(err)
		h := c.Response().Header()
		if p.status >= 500 {
			log.LogAttrs(c.Request().Context(), slog.LevelError, "request failed",
				slog.String("request_id", h.Get(echo.HeaderXRequestID)), slog.String("method", c.Request().Method),
				slog.String("route", routeOf(c)), slog.Int("status", p.status), slog.String("error", err.Error()))
		}
		switch p.status {
		case http.StatusUnauthorized:
			h.Set("WWW-Authenticate", `Bearer realm="orders"`)
		case http.StatusServiceUnavailable:
			h.Set("Retry-After", strconv.Itoa(retryAfterUnavailable))
		}
		if err := c.JSON(p.status, gen.Error{Code: p.code, Message: p.message, Status: int32(p.status)}); err != nil {
			log.Debug("writing an error answer failed", slog.String("error", err.Error()))
		}
	}
}
