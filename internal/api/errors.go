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

// The messages of answers whose cause must not reach the client.
const (
	msgInternal    = "internal error"
	msgUnavailable = "the order store cannot be reached; retry after the time in Retry-After"
	msgEnded       = "the request ended before it was answered"
)

const retryAfterUnavailable = 5 // a 503's, in seconds: a failover's length

// errorTable maps errors to answers; an empty message means the error's own text. The
// storage's errors name addresses and records: a fixed message, the text in the log.
var errorTable = []struct {
	err     error
	status  int
	code    gen.ErrorCode
	message string
}{
	{order.ErrNotFound, http.StatusNotFound, gen.ErrorCodeOrderNotFound, ""},
	{order.ErrAlreadyShipped, http.StatusConflict, gen.ErrorCodeOrderAlreadyShipped, ""},
	{order.ErrPetNotFound, http.StatusNotFound, gen.ErrorCodePetNotFound, ""},
	{order.ErrEventsExpired, http.StatusGone, gen.ErrorCodeEventsExpired, ""},
	{order.ErrBadRequest, http.StatusBadRequest, gen.ErrorCodeInvalidRequest, ""},
	{pagetoken.ErrMalformed, http.StatusBadRequest, gen.ErrorCodeInvalidRequest, "pageToken is malformed; see openapi-v2.yaml"},
	{pagetoken.ErrAltered, http.StatusBadRequest, gen.ErrorCodeInvalidRequest, "pageToken was altered; see openapi-v2.yaml"},
	{pagetoken.ErrOtherVersion, http.StatusBadRequest, gen.ErrorCodeInvalidRequest, "pageToken was made by another version of the API; see openapi-v2.yaml"},
	{pagetoken.ErrOtherFilter, http.StatusBadRequest, gen.ErrorCodeInvalidRequest,
		"pageToken was made with other filters than status, petId, shipDateFrom and shipDateBefore as sent; see openapi-v2.yaml"},
	{pagetoken.ErrInvalid, http.StatusBadRequest, gen.ErrorCodeInvalidRequest, "pageToken is invalid; see openapi-v2.yaml"},
	{order.ErrUnavailable, http.StatusServiceUnavailable, gen.ErrorCodeServiceUnavailable, msgUnavailable},
	// Retrying cannot mend a damaged record: a 500.
	{order.ErrCorrupt, http.StatusInternalServerError, gen.ErrorCodeInternalError, msgInternal},
	// The request's own end (requestEnded): an answer the contract allows every operation,
	// "not answered now, nothing changed", and no outage: not counted, not logged.
	{context.Canceled, http.StatusServiceUnavailable, gen.ErrorCodeServiceUnavailable, msgEnded},
	{context.DeadlineExceeded, http.StatusServiceUnavailable, gen.ErrorCodeServiceUnavailable, msgEnded},
}

// requestEnded reports whether err is the request's own end, no failure of a store.
func requestEnded(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}

func problemFor(err error) *problem {
	var p *problem
	if errors.As(err, &p) {
		return p
	}
	for _, row := range errorTable {
		if errors.Is(err, row.err) {
			return &problem{row.status, row.code, cmp.Or(row.message, err.Error())}
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
	return &problem{http.StatusInternalServerError, gen.ErrorCodeInternalError, msgInternal}
}

// errorHandler renders every error as an Error object; steps and handlers only return them.
func errorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		p, ex, res := problemFor(err), exchangeOf(c.Request().Context()), c.Response()
		if res.Committed {
			return
		}
		// A 503 and a store's fault are told by the access line, the metrics and the stores' warnings.
		if p.status >= 500 && ex != nil && !requestEnded(ex, err) {
			level := slog.LevelError
			if fault := (*order.Fault)(nil); p.status == http.StatusServiceUnavailable || errors.As(err, &fault) {
				level = slog.LevelDebug
			}
			log.LogAttrs(ex, level, "request failed", slog.String("request_id", ex.id), slog.String("method", ex.req.Method),
				slog.String("route", ex.route), slog.Int("status", p.status), slog.String("error", err.Error()))
		}
		if p.status == http.StatusUnauthorized {
			res.Header().Set("WWW-Authenticate", `Bearer realm="orders"`)
		}
		// echo's encoder indents for ?pretty; writing the Error by hand saved a 404 under 5%.
		err = c.JSON(p.status, gen.Error{Code: p.code, Message: p.message, Status: int32(p.status)})
		if err != nil {
			log.Debug("writing an error answer failed", slog.String("error", err.Error()))
		}
	}
}
