package api

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/store"
)

// observe is the outermost middleware: it gives every request an id, puts in the one hook
// that writes the headers every answer of the route carries, renders the request's error
// itself (so that the status is known here), then writes one access line and the metrics.
// The line names the caller by key name and prefix, or address: never the key.
func observe(log *slog.Logger, obs Observer, ct *contract, sunset sunsetHeaders) echo.MiddlewareFunc {
	access := log.Handler()
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			res := c.Response()
			id := c.Request().Header.Get(echo.HeaderXRequestID)
			if !validRequestID(id) {
				id = newRequestID()
			}
			h := res.Header()
			ex := &exchange{Context: c, requestID: [1]string{id}, sunset: &sunset, op: ct.operationAt(c)}
			// Canonical names, as Header.Set would make them, and values made once (see
			// writeHeaders).
			h["X-Request-Id"] = ex.requestID[:] // for errorHandler's log line; the hook writes it again
			h["X-Content-Type-Options"] = nosniff
			ex.hook = headerHook{ResponseWriter: res.Writer, ex: ex}
			res.Writer = &ex.hook

			err := next(ex)
			if err != nil {
				c.Error(err)
			}

			took := time.Since(start)
			op := ct.labelOf(c, ex.op)
			obs.Request(op, res.Status, took)
			if res.Status == 503 && !requestEnded(c.Request().Context(), err) {
				obs.StoreError(op) // a client that hung up is not a store that failed
			}
			req := c.Request()
			if !access.Enabled(req.Context(), slog.LevelInfo) {
				return nil
			}
			// The record goes to the handler as Logger.LogAttrs would give it, but without the
			// caller's program counter, which LogAttrs walks the stack for on every line: the
			// access line names its route, not a line of this file (a handler that adds the
			// source omits it for a record without one).
			// Room for every field, so that naming the caller does not grow the slice onto
			// the heap; the record takes them in one call, so that it grows its own once.
			var fields [8]slog.Attr
			attrs := append(fields[:0],
				slog.String("request_id", id),
				slog.String("method", req.Method),
				slog.String("route", routeOf(c)),
				slog.Int("status", res.Status),
				slog.Float64("duration_ms", float64(took.Microseconds())/1000),
				slog.Int64("bytes", res.Size),
			)
			if caller := auth.CallerFrom(req.Context()); caller != nil {
				if caller.Key != nil {
					attrs = append(attrs, slog.String("key_name", caller.Key.Name), slog.String("key_prefix", caller.Key.Prefix))
				} else {
					attrs = append(attrs, slog.String("client", caller.Addr))
				}
			}
			r := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
			r.AddAttrs(attrs...)
			// A handler's error is dropped, as Logger.LogAttrs drops it: the line is lost, the
			// request is not.
			_ = access.Handle(req.Context(), r)
			return nil
		}
	}
}

// exchange is what the steps of the chain learn about one request that its answer's headers
// depend on. observe makes it; admit fills in its decision. It is also the request's echo
// context, as echo's docs extend one: observe passes it on in place of the context it got,
// so the steps after it find it without a lookup (and without echo allocating a map per
// request for c.Set); exchangeOf finds it too behind a step that replaced the context.
type exchange struct {
	echo.Context
	requestID   [1]string         // the X-Request-Id value, as the header map holds it
	op          *operation        // the contract's operation of the route and method, or nil
	limit       *rateLimitHeaders // admit's decision: &limitValues, or nil outside the versions' bases
	limitValues rateLimitHeaders
	sunset      *sunsetHeaders
	hook        headerHook // the writer under every other step's (see headerHook)
	// The caller of a request under a version's base, its key and its Trip, which admit
	// makes: kept here, with the request's other state, rather than allocated on their own.
	caller auth.Caller
	key    auth.Key
	trip   store.Trip // the request's round trip, for admit (as store.Begin makes it)
}

// headerHook is the response writer that observe puts under every other step's writer: when
// the status is written (by echo's Response, by compress's writer once it knows whether it
// compresses, or implicitly by a first Write), it writes the exchange's headers (writeHeaders),
// then passes the status on. It does as a writer what a Response.Before hook would, without
// a closure and a slice of hooks to allocate per request.
type headerHook struct {
	http.ResponseWriter
	ex    *exchange
	wrote bool
}

// WriteHeader writes the exchange's headers, then the status.
func (w *headerHook) WriteHeader(status int) {
	if !w.wrote {
		w.wrote = true
		w.ex.writeHeaders(w.Header(), status, w.ex.Path())
	}
	w.ResponseWriter.WriteHeader(status)
}

// Write writes b, after the headers of a 200 when no status was written.
func (w *headerHook) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap is the writer under it, for http.ResponseController (flushing, deadlines).
func (w *headerHook) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// exchangeOf is the request's exchange, which observe made, or nil when observe did not run.
// observe passes it on as the context, so the steps after it find it with a type assertion.
// A step between them that replaced the context (as echo's docs extend one, wrapping it)
// would hide it: it is then found under the response's writers, where observe put its
// header hook, since every writer on top says what it wraps (Unwrap, which
// http.ResponseController relies on too). So no step's context can fail a request here.
func exchangeOf(c echo.Context) *exchange {
	if ex, ok := c.(*exchange); ok {
		return ex
	}
	w := c.Response().Writer
	for w != nil {
		if hook, ok := w.(*headerHook); ok {
			return hook.ex
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	return nil
}

// writeHeaders writes the headers that every answer of a route carries, whoever wrote the
// answer: a handler, the router or errorHandler. It runs when the status is written, after
// the generated responses have set their declared headers (the handlers leave those zero),
// so the values here are the ones sent. This is the one rule of which route carries which:
//
//   - every answer: X-Request-Id (a generated response sets its declared one, empty);
//   - under a version's base: the rate-limit headers of admit's decision;
//   - the deprecated operation: Deprecation, Sunset and Link, errors included;
//   - a 429: Retry-After until the binding window (or the ban) ends; a 503:
//     retryAfterUnavailable;
//   - an error: Cache-Control: no-store, for an error is about this request only;
//   - a request with a chunked body: Connection: close (closesConnection says why).
func (ex *exchange) writeHeaders(h http.Header, status int, route string) {
	// The names are written canonical, as Header.Set would make them, without canonicalizing
	// (and allocating) each one again on every request; the values are one-element slices
	// made once, per request or per process, never a new []string per header. Each has
	// cap == len, so a Header.Add after this appends to a copy, never to a shared array.
	h["X-Request-Id"] = ex.requestID[:]
	if l := ex.limit; l != nil {
		h["X-Ratelimit-Limit"] = l.limit[:]
		h["X-Ratelimit-Remaining"] = l.remaining[:]
		h["X-Ratelimit-Reset"] = l.reset[:]
		h["Ratelimit"] = l.ietf[:]
		h["Ratelimit-Policy"] = l.policy[:]
	}
	if route == petRoute {
		h["Deprecation"] = ex.sunset.deprecation[:]
		h["Sunset"] = ex.sunset.sunset[:]
		h["Link"] = ex.sunset.link[:]
	}
	switch {
	case status == http.StatusTooManyRequests && ex.limit != nil:
		h["Retry-After"] = ex.limit.retryAfter[:]
	case status == http.StatusServiceUnavailable:
		h["Retry-After"] = retryAfterUnavailableValue
	}
	if status >= 400 {
		h["Cache-Control"] = noStore
	}
	if closesConnection(ex.Request()) {
		h["Connection"] = connectionClose
	}
}

// Header values that never change, shared by every answer (each cap == len: see writeHeaders).
var (
	nosniff                    = []string{"nosniff"}
	noStore                    = []string{"no-store"}
	connectionClose            = []string{"close"}
	retryAfterUnavailableValue = []string{strconv.Itoa(retryAfterUnavailable)}
)

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
