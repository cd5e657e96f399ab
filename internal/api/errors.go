package api

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
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

var errSunset = errors.New("GET /pets/{petId} was retired on its sunset date; see the Link header")

// The messages of answers whose cause must not reach the client.
const (
	msgInternal    = "internal error"
	msgUnavailable = "the order store cannot be reached; retry after the time in Retry-After"
	msgEnded       = "the request ended before it was answered"
)

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
	{ErrNoCredentials, http.StatusUnauthorized, gen.ErrorCodeUnauthorized, ""},
	{ErrMalformed, http.StatusUnauthorized, gen.ErrorCodeUnauthorized, ""},
	{ErrUnknownKey, http.StatusUnauthorized, gen.ErrorCodeUnauthorized, ""},
	{errSunset, http.StatusGone, gen.ErrorCodeEndpointSunset, ""},
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

// retryAfterUnavailable is a 503's Retry-After in seconds: long enough for a failover, short
// enough that clients come back soon after the store does.
const retryAfterUnavailable = 5

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

// errorHandler renders every error that reaches echo as an Error object.
func errorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		p := problemFor(err)
		h := c.Response().Header()
		if p.status >= 500 && !requestEnded(c.Request().Context(), err) {
			// A 500 is a fault to look into. A 503 and a store's fault are told already by
			// the access line, the metrics and the stores' own warnings: debug level.
			level := slog.LevelError
			var fault *order.Fault
			if p.status == http.StatusServiceUnavailable || errors.As(err, &fault) {
				level = slog.LevelDebug
			}
			log.LogAttrs(c.Request().Context(), level, "request failed",
				slog.String("request_id", h.Get(echo.HeaderXRequestID)), slog.String("method", c.Request().Method),
				slog.String("route", routeOf(c)), slog.Int("status", p.status), slog.String("error", err.Error()))
		}
		if p.status == http.StatusUnauthorized {
			h.Set("WWW-Authenticate", `Bearer realm="orders"`)
		}
		var werr error
		if c.QueryParams().Has("pretty") { // echo's indented JSON, as its own answers give it
			werr = c.JSONPretty(p.status, gen.Error{Code: p.code, Message: p.message, Status: int32(p.status)}, "  ")
		} else {
			h.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
			c.Response().WriteHeader(p.status)
			_, werr = c.Response().Write(appendError(make([]byte, 0, 64+len(p.message)), p))
		}
		if werr != nil {
			log.Debug("writing an error answer failed", slog.String("error", werr.Error()))
		}
	}
}

// appendError writes p as encoding/json writes the contract's Error, byte for byte (tested).
func appendError(b []byte, p *problem) []byte {
	b = append(append(append(b, `{"code":"`...), p.code...), `","message":`...) // codes are [a-z_]
	b = appendJSONString(b, p.message)
	b = strconv.AppendInt(append(b, `,"status":`...), int64(p.status), 10)
	return append(b, "}\n"...)
}

// appendJSONString writes s as encoding/json does: printable ASCII as it is, but for the
// characters it escapes, for which it asks encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			quoted, _ := json.Marshal(s)
			return append(b, quoted...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// requestErrorMessage names the parameter, what it must be, and doc, which says so.
func requestErrorMessage(re *openapi3filter.RequestError, doc string) string {
	if re.Parameter == nil {
		return "invalid request: " + re.Error() + "; see " + doc
	}
	p := re.Parameter
	why := expectation(p, re.Err)
	if rule := ruleError(""); errors.As(re.Err, &rule) {
		why = string(rule)
	}
	return fmt.Sprintf("%s parameter %s: %s; see %s", p.In, p.Name, why, doc)
}

// expectation says what the parameter must be; for a string, by the rule it broke (cause),
// since a short value may fail its pattern.
func expectation(p *openapi3.Parameter, cause error) string {
	if p.Schema == nil || p.Schema.Value == nil {
		return "invalid value"
	}
	s := p.Schema.Value
	switch {
	case s.Type.Is(openapi3.TypeInteger):
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		if s.Format == "int32" {
			lo, hi = math.MinInt32, math.MaxInt32
		}
		// The document's bounds are float64s; one at the edge of int64 does not convert back.
		if s.Min != nil && *s.Min > math.MinInt64 {
			lo = int64(*s.Min)
		}
		if s.Max != nil && *s.Max < math.MaxInt64 {
			hi = int64(*s.Max)
		}
		return fmt.Sprintf("must be an integer from %d to %d", lo, hi)
	case s.Type.Is(openapi3.TypeString):
		var se *openapi3.SchemaError
		errors.As(cause, &se)
		switch {
		case se != nil && se.SchemaField == "pattern" && s.Pattern != "":
			return "must match the pattern " + s.Pattern
		case s.Format == "date-time" && (se == nil || se.SchemaField != "maxLength"):
			return order.DateTimeShape
		case s.MaxLength != nil && s.MinLength > 0:
			return fmt.Sprintf("must be a string of %d to %d characters", s.MinLength, *s.MaxLength)
		case s.MaxLength != nil:
			return fmt.Sprintf("must be a string of at most %d characters", *s.MaxLength)
		}
	case s.Type.Is(openapi3.TypeArray) && s.Items != nil && s.Items.Value != nil && len(s.Items.Value.Enum) > 0:
		words := make([]string, 0, len(s.Items.Value.Enum))
		for _, w := range s.Items.Value.Enum {
			words = append(words, fmt.Sprint(w))
		}
		msg := "each value must be one of " + strings.Join(words, ", ")
		if s.MaxItems != nil {
			msg += fmt.Sprintf(", at most %d values", *s.MaxItems)
		}
		return msg
	}
	return "must be " + strings.Join(s.Type.Slice(), " or ")
}
