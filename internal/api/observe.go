package api

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/trace"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
)

// observe is the outermost step: request id, header hook, the error rendered (for the status),
// access line and metrics. The line names the caller by key name and prefix, never the key.
func observe(log *slog.Logger, access io.Writer, obs Observer, ct *contract, sunset Sunset, cors origins, traced bool, now func() time.Time) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := now()
			res := c.Response()
			id := c.Request().Header.Get(echo.HeaderXRequestID)
			if !validRequestID(id) {
				id = newRequestID()
			}
			ex := &exchange{requestID: id, sunset: &sunset, op: ct.operationAt(c)}
			if len(cors) > 0 && ct.underBase(c.Request().URL.Path) {
				ex.cors = cors
			}
			c.Set(exchangeKey, ex)
			res.Header().Set(echo.HeaderXRequestID, id) // for errorHandler's log line
			res.Header().Set("X-Content-Type-Options", "nosniff")
			res.Before(func() {
				ex.writeHeaders(res.Header(), res.Status, c.Path(), c.Request())
				if res.Header().Get(echo.HeaderContentType) == eventStreamType {
					ex.opened = now() // its 200 is committed: the stream is open
				}
			})

			err := next(c)
			if err != nil {
				c.Error(err)
			}
			took := now().Sub(start)
			op := ct.labelOf(c, ex.op)
			// A stream lasts as long as its client stays: its latency is the time to open it,
			// and the access line keeps how long it lasted.
			latency := took
			if !ex.opened.IsZero() {
				latency = ex.opened.Sub(start)
			}
			obs.Request(op, res.Status, latency)
			if res.Status == 503 && !requestEnded(c.Request().Context(), err) && err != errDraining {
				obs.StoreError(op) // neither a client that hung up nor a shutdown is a store that failed
			}
			req := c.Request()
			if access == nil || !log.Enabled(req.Context(), slog.LevelInfo) {
				return nil
			}
			// Written by hand in slog's JSON form (time, level and msg first, then the fields),
			// cheaper than slog's handler on every request.
			line := append(make([]byte, 0, 512), `{"time":"`...)
			line = time.Now().AppendFormat(line, time.RFC3339Nano)
			line = append(line, `","level":"INFO","msg":"request"`...)
			line = appendField(line, "request_id", id)
			line = appendField(line, "method", req.Method)
			line = appendField(line, "route", routeOf(c))
			line = strconv.AppendInt(append(line, `,"status":`...), int64(res.Status), 10)
			line = strconv.AppendFloat(append(line, `,"duration_ms":`...), float64(took.Microseconds())/1000, 'f', -1, 64)
			line = strconv.AppendInt(append(line, `,"bytes":`...), res.Size, 10)
			if caller := CallerFrom(req.Context()); caller != nil && caller.Key != nil {
				line = appendField(line, "key_name", caller.Key.Name)
				line = appendField(line, "key_prefix", caller.Key.Prefix)
			} else if caller != nil {
				line = appendField(line, "client", caller.Addr)
			}
			if traced { // the span traced started: the line and the trace find each other
				if sc := trace.SpanContextFromContext(req.Context()); sc.HasTraceID() {
					line = appendField(line, "trace_id", sc.TraceID().String())
				}
			}
			_, _ = access.Write(append(line, "}\n"...)) // a lost line loses no request
			return nil
		}
	}
}

// appendField appends ,"name":value with value as a JSON string; only a key's name may need
// escaping, which encoding/json does.
func appendField(b []byte, name, value string) []byte {
	b = append(append(append(b, `,"`...), name...), `":`...)
	for i := 0; i < len(value); i++ {
		if c := value[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			quoted, _ := json.Marshal(value)
			return append(b, quoted...)
		}
	}
	return append(append(append(b, '"'), value...), '"')
}

const exchangeKey = "orderd.exchange" // in echo's context store

// exchange is what the answer's headers depend on: observe makes it, admit fills it in.
type exchange struct {
	requestID string
	op        *operation          // of the route and method, or nil
	limit     *ratelimit.Decision // nil outside the versions' bases
	sunset    *Sunset
	cors      origins // under a version's base with CORS on, else nil
	caller    Caller
	key       order.Key
	trip      order.Trip
	rateLimit string    // admit's outcome, as Observer.RateLimit is told; "" when none was decided
	opened    time.Time // when an event stream's status was written; zero for any other answer
	// noRetryAfter: a 429 that says nothing of when to retry (too_many_streams).
	noRetryAfter bool
}

// writeHeaders writes the headers every answer of a route carries, whoever wrote it, when
// its status is written: docs/design.md, "Where each header is written". A chunked request
// may have carried a Content-Length Go's server removed (smuggling): RFC 9112 §6.1 wants the
// close. Names are canonical, which Header.Set then uses without a copy (measured).
func (ex *exchange) writeHeaders(h http.Header, status int, route string, r *http.Request) {
	h.Set(echo.HeaderXRequestID, ex.requestID)
	if d := ex.limit; d != nil {
		w, secs := d.Binding, int64(d.RetryAfter.Seconds()) // the IETF t: until w ends
		h.Set("X-Ratelimit-Limit", strconv.FormatInt(w.Limit, 10))
		h.Set("X-Ratelimit-Remaining", strconv.FormatInt(w.Remaining, 10))
		// Rounded up, as Retry-After: a ban ends within a second, and a client that waits until
		// Reset must find it over.
		reset := w.End.Unix()
		if w.End.Nanosecond() > 0 {
			reset++
		}
		h.Set("X-Ratelimit-Reset", strconv.FormatInt(reset, 10))
		h.Set("Ratelimit", `"`+w.Name+`";r=`+strconv.FormatInt(w.Remaining, 10)+";t="+strconv.FormatInt(secs, 10))
		h.Set("Ratelimit-Policy", policyItem(d.Minute)+", "+policyItem(d.Day))
		if status == http.StatusTooManyRequests && !ex.noRetryAfter {
			h.Set("Retry-After", strconv.FormatInt(secs, 10))
		}
	}
	if route == petRoute {
		h.Set("Deprecation", "@"+strconv.FormatInt(ex.sunset.DeprecatedAt.Unix(), 10)) // RFC 9745
		h.Set("Sunset", ex.sunset.SunsetAt.UTC().Format(http.TimeFormat))              // RFC 8594
		h.Set("Link", "<"+ex.sunset.Link+`>; rel="sunset"`)
	}
	if route == eventsRoute { // a page or a stream by Accept: caches must key on it (RFC 9110 §12.5.5)
		h.Add(echo.HeaderVary, echo.HeaderAccept)
	}
	if status == http.StatusServiceUnavailable {
		h.Set("Retry-After", strconv.Itoa(retryAfterUnavailable))
	}
	if status >= 400 {
		h.Set("Cache-Control", "no-store")
	}
	if len(r.TransferEncoding) > 0 {
		h.Set(echo.HeaderConnection, "close")
	}
	if ex.cors != nil {
		writeCORS(h, ex.cors, r)
	}
}

// policyItem is w as an item of the RateLimit-Policy header: "name";q=limit;w=seconds.
func policyItem(w ratelimit.Window) string {
	return `"` + w.Name + `";q=` + strconv.FormatInt(w.Limit, 10) + ";w=" + strconv.FormatInt(w.Seconds(), 10)
}

// validRequestID accepts ids a client may choose: short, none that forges a log line.
var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`).MatchString

// Request ids are a random prefix per process and a counter.
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

// Observer is told what the service does, for metrics; internal/metrics implements it.
type Observer interface {
	Request(operation string, status int, took time.Duration) // operation: labelOf's; took: a stream's, to its status
	RateLimit(outcome string)                                 // admitted, limited, banned, unavailable
	Cancel(outcome string)                                    // cancelled, already_cancelled, shipped, not_found, error
	StoreError(operation string)                              // a store not reached during it
	Streams(delta int)                                        // event streams opened (1) and ended (-1)
	Event(kind string)                                        // an event this instance recorded, by type
}

type noObserver struct{}

func (noObserver) Request(string, int, time.Duration) {}
func (noObserver) RateLimit(string)                   {}
func (noObserver) Cancel(string)                      {}
func (noObserver) StoreError(string)                  {}
func (noObserver) Streams(int)                        {}
func (noObserver) Event(string)                       {}
