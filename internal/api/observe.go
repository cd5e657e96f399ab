package api

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/internal/auth"
)

// observe is the outermost middleware: it gives every request an id, renders its error
// itself (so that the status is known here), then writes one access line and the metrics.
// The line names the caller by key name and prefix, or address: never the key.
func observe(log *slog.Logger, obs Observer, ops operations) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			res := c.Response()
			id := c.Request().Header.Get(echo.HeaderXRequestID)
			if !validRequestID(id) {
				id = newRequestID()
			}
			h := res.Header()
			h.Set(echo.HeaderXRequestID, id)
			h.Set("X-Content-Type-Options", "nosniff")
			res.Before(func() {
				// An error is about this request only, whoever wrote it: no cache may keep it.
				if res.Status >= 400 {
					h.Set("Cache-Control", "no-store")
				}
			})

			if err := next(c); err != nil {
				c.Error(err)
			}

			took := time.Since(start)
			op := ops.of(c)
			obs.Request(op, res.Status, took)
			if res.Status == 503 {
				obs.StoreError(op)
			}
			req := c.Request()
			if !log.Enabled(req.Context(), slog.LevelInfo) {
				return nil
			}
			attrs := []slog.Attr{
				slog.String("request_id", id),
				slog.String("method", req.Method),
				slog.String("route", routeOf(c)),
				slog.Int("status", res.Status),
				slog.Float64("duration_ms", float64(took.Microseconds())/1000),
				slog.Int64("bytes", res.Size),
			}
			if caller := auth.CallerFrom(req.Context()); caller != nil {
				if caller.Key != nil {
					attrs = append(attrs, slog.String("key_name", caller.Key.Name), slog.String("key_prefix", caller.Key.Prefix))
				} else {
					attrs = append(attrs, slog.String("client", caller.Addr))
				}
			}
			log.LogAttrs(req.Context(), slog.LevelInfo, "request", attrs...)
			return nil
		}
	}
}

// validRequestID accepts ids a client may choose: short, and only characters that cannot
// forge a log line or a header.
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

// Request ids are a random prefix per process and a counter: unique, and cheap to make.
var (
	requestIDPrefix = func() string {
		var b [6]byte
		rand.Read(b[:])
		return hex.EncodeToString(b[:])
	}()
	requestIDCounter atomic.Uint64
)

func newRequestID() string {
	return requestIDPrefix + "-" + strconv.FormatUint(requestIDCounter.Add(1), 36)
}

func routeOf(c echo.Context) string {
	if p := c.Path(); p != "" && p != "/*" {
		return p
	}
	return "unmatched"
}

// operations maps an echo route and method to the operationId of the contract, so that
// metrics have one label value per operation and a bounded number in all.
type operations map[string]string

func operationsOf(doc *openapi3.T) operations {
	ops := operations{}
	for path, item := range doc.Paths.Map() {
		route := BasePath + echoPath(path)
		for method, op := range item.Operations() {
			ops[method+" "+route] = op.OperationID
		}
	}
	return ops
}

// publicOperations are the routes of operations that the contract exempts from security.
func publicOperations(doc *openapi3.T) map[string]bool {
	public := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Security != nil && len(*op.Security) == 0 {
				public[method+" "+BasePath+echoPath(path)] = true
			}
		}
	}
	return public
}

func (ops operations) of(c echo.Context) string {
	if op, ok := ops[c.Request().Method+" "+c.Path()]; ok {
		return op
	}
	// Routes outside the contract (/healthz, /readyz, /metrics, /docs) are few and fixed.
	if p := c.Path(); p != "" && p != "/*" && !strings.HasPrefix(p, BasePath+"/") {
		return p
	}
	return "unknown"
}

// echoPath turns /store/orders/{orderId} into /store/orders/:orderId.
func echoPath(p string) string {
	return strings.NewReplacer("{", ":", "}", "").Replace(p)
}
