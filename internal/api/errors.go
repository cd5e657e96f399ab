package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/pagetoken"
)

// problem is an answer as an Error object: returned by any step, rendered by errorHandler.
type problem struct {
	status  int
	code    gen.ErrorCode
	message string
}

func (p *problem) Error() string { return fmt.Sprintf("%d %s: %s", p.status, p.code, p.message) }

const (
	msgUnavailable        = "the order store cannot be reached; retry after the time in Retry-After"
	retryAfterUnavailable = 5 // a 503's, in seconds: a failover's length
)

// errorTable maps errors to answers ("": the error's text); a store's error is not shown: it names addresses.
var errorTable = []struct {
	err error
	problem
}{
	{order.ErrNotFound, problem{http.StatusNotFound, gen.ErrorCodeOrderNotFound, ""}},
	{order.ErrAlreadyShipped, problem{http.StatusConflict, gen.ErrorCodeOrderAlreadyShipped, ""}},
	{order.ErrPetNotFound, problem{http.StatusNotFound, gen.ErrorCodePetNotFound, ""}},
	{order.ErrEventsExpired, problem{http.StatusGone, gen.ErrorCodeEventsExpired, ""}},
	{order.ErrBadRequest, problem{http.StatusBadRequest, gen.ErrorCodeInvalidRequest, ""}},
	{pagetoken.ErrMalformed, problem{http.StatusBadRequest, gen.ErrorCodeInvalidRequest, "pageToken is malformed; see openapi-v2.yaml"}},
	{pagetoken.ErrAltered, problem{http.StatusBadRequest, gen.ErrorCodeInvalidRequest, "pageToken was altered; see openapi-v2.yaml"}},
	{pagetoken.ErrOtherVersion, problem{http.StatusBadRequest, gen.ErrorCodeInvalidRequest, "pageToken was made by another version of the API; see openapi-v2.yaml"}},
	{pagetoken.ErrOtherFilter, problem{http.StatusBadRequest, gen.ErrorCodeInvalidRequest,
		"pageToken was made with other filters than status, petId, shipDateFrom and shipDateBefore as sent; see openapi-v2.yaml"}},
	{pagetoken.ErrInvalid, problem{http.StatusBadRequest, gen.ErrorCodeInvalidRequest, "pageToken is invalid; see openapi-v2.yaml"}},
	{order.ErrUnavailable, problem{http.StatusServiceUnavailable, gen.ErrorCodeServiceUnavailable, msgUnavailable}},
	{order.ErrCorrupt, problem{http.StatusInternalServerError, gen.ErrorCodeInternalError, "internal error"}}, // retrying cannot mend it
	// The request's own end (requestEnded), which the contract allows every operation: not counted, not logged.
	{context.Canceled, problem{http.StatusServiceUnavailable, gen.ErrorCodeServiceUnavailable, "the request ended before it was answered"}},
	{context.DeadlineExceeded, problem{http.StatusServiceUnavailable, gen.ErrorCodeServiceUnavailable, "the request ended before it was answered"}},
}

func problemFor(err error) *problem {
	var p *problem
	if errors.As(err, &p) {
		return p
	}
	for _, row := range errorTable {
		if p := row.problem; errors.Is(err, row.err) {
			p.message = cmp.Or(p.message, err.Error())
			return &p
		}
	}
	// echo's own errors: routing, and binding (whose text is no contract to parse).
	if he := (*echo.HTTPError)(nil); errors.As(err, &he) {
		switch {
		case he.Code == http.StatusNotFound:
			return &problem{http.StatusNotFound, gen.ErrorCodeNotFound, "no such resource"}
		case he.Code == http.StatusMethodNotAllowed:
			return &problem{http.StatusMethodNotAllowed, gen.ErrorCodeMethodNotAllowed, "method not allowed on this resource; see the Allow header"}
		case he.Code >= 400 && he.Code < 500:
			return &problem{http.StatusBadRequest, gen.ErrorCodeInvalidRequest, "the request does not meet the contract"}
		}
	}
	return &problem{http.StatusInternalServerError, gen.ErrorCodeInternalError, "internal error"}
}

// errorHandler renders every error as an Error object; steps and handlers only return them.
func errorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		p, res := problemFor(err), c.Response()
		ex, _ := c.Request().Context().(*exchange)
		if res.Committed {
			return
		}
		if p.status >= 500 && ex != nil && !requestEnded(ex, err) {
			level := slog.LevelError
			if fault := (*order.Fault)(nil); p.status == http.StatusServiceUnavailable || errors.As(err, &fault) {
				level = slog.LevelDebug // the access line, the metrics and the stores' warnings tell of it
			}
			log.LogAttrs(ex, level, "request failed", slog.String("request_id", ex.id), slog.String("method", ex.req.Method),
				slog.String("route", ex.route), slog.Int("status", p.status), slog.String("error", err.Error()))
		}
		if p.status == http.StatusUnauthorized {
			res.Header().Set("WWW-Authenticate", `Bearer realm="orders"`)
		}
		if err := c.JSON(p.status, gen.Error{Code: p.code, Message: p.message, Status: int32(p.status)}); err != nil {
			log.Debug("writing an error answer failed", slog.String("error", err.Error()))
		}
	}
}
