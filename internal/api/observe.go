package api

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
)

// exchange is the request's context and all it carries: observe makes it, admit fills in the
// caller and decision, the header hook writes from it. Its Trip shares the stores' round trip.
type exchange struct {
	order.Trip
	req          *http.Request
	id           string
	start        time.Time
	route        string     // echo's, or "unmatched"
	op           *operation // of the route and method, or nil
	base         bool       // under a version's base
	addr         string     // the client's address, once admit named it
	key          *order.Key // the request's valid key (&found), or nil
	found        order.Key
	limited      bool // admit's decision is in limit
	limit        ratelimit.Decision
	rateLimit    string    // admit's outcome as Observer.RateLimit is told; "" when none
	noRetryAfter bool      // a 429 that cannot say when to retry (too_many_streams)
	opened       time.Time // when an event stream's status was written
}

type exchangeKey struct{}

// Value answers the exchange itself, and the Trip's and the request's values.
func (ex *exchange) Value(key any) any {
	if key == (exchangeKey{}) {
		return ex
	}
	return ex.Trip.Value(key)
}

func exchangeOf(ctx context.Context) *exchange {
	ex, _ := ctx.Value(exchangeKey{}).(*exchange)
	return ex
}

type observer struct {
	*Config
	access *slog.Logger // nil: no access line
	ct     *contract
	cors   origins
}

func newObserver(cfg *Config, ct *contract, cors origins) *observer {
	o := &observer{Config: cfg, ct: ct, cors: cors}
	if cfg.AccessLog != nil {
		o.access = slog.New(slog.NewJSONHandler(cfg.AccessLog, nil))
	}
	return o
}

// observe is the outermost step: the exchange, the span, the header hook, the error's
// rendering, the metrics and the access line (naming a key by its name and prefix).
func (o *observer) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req, res := c.Request(), c.Response()
		ctx, span := req.Context(), trace.Span(nil)
		if o.Tracer != nil {
			ctx, span = o.startSpan(c, ctx)
			defer span.End()
		}
		ex := &exchange{Trip: order.Trip{Context: ctx}, req: req, start: o.Now(), route: c.Path()}
		ex.op, ex.base = o.ct.operations[req.Method+" "+ex.route], o.ct.underBase(req.URL.Path)
		if ex.route == "" || ex.route == "/*" {
			ex.route = "unmatched"
		}
		if ex.id = req.Header.Get(echo.HeaderXRequestID); !validRequestID(ex.id) {
			ex.id = rand.Text()
		}
		c.SetRequest(req.WithContext(ex))
		res.Before(func() { o.writeHeaders(ex, res) })
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		if span != nil {
			endSpan(span, ex, res.Status)
		}
		took := o.Now().Sub(ex.start)
		latency := took // a stream's: the time to open it; it lasts as long as its client stays
		if !ex.opened.IsZero() {
			latency = ex.opened.Sub(ex.start)
		}
		label := ex.label()
		o.Observer.Request(label, res.Status, latency)
		if res.Status == http.StatusServiceUnavailable && !requestEnded(ex, err) && err != errDraining {
			o.Observer.StoreError(label) // neither a client that hung up nor a shutdown is a store that failed
		}
		if o.access == nil || !o.Logger.Enabled(ex, slog.LevelInfo) {
			return nil
		}
		attrs := append(make([]slog.Attr, 0, 9), slog.String("request_id", ex.id), slog.String("method", req.Method),
			slog.String("route", ex.route), slog.Int("status", res.Status),
			slog.Float64("duration_ms", float64(took.Microseconds())/1000), slog.Int64("bytes", res.Size))
		if ex.key != nil {
			attrs = append(attrs, slog.String("key_name", ex.key.Name), slog.String("key_prefix", ex.key.Prefix))
		} else if ex.addr != "" {
			attrs = append(attrs, slog.String("client", ex.addr))
		}
		if sc := trace.SpanContextFromContext(ex); o.Tracer != nil && sc.HasTraceID() {
			attrs = append(attrs, slog.String("trace_id", sc.TraceID().String())) // the line finds its trace
		}
		o.access.LogAttrs(ex, slog.LevelInfo, "request", attrs...)
		return nil
	}
}

// writeHeaders is the header hook: the headers every answer of a route carries, whoever wrote
// it (docs/design.md, "The HTTP pipeline's other rules"). Canonical names: Set does not copy them.
func (o *observer) writeHeaders(ex *exchange, res *echo.Response) {
	h := res.Header()
	h.Set(echo.HeaderXRequestID, ex.id)
	h.Set(echo.HeaderXContentTypeOptions, "nosniff")
	if ex.route != "/metrics" { // which compresses itself
		h.Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
	}
	if d := &ex.limit; ex.limited {
		w, secs := d.Binding, int64(d.RetryAfter.Seconds()) // the IETF t: until w ends
		h.Set("X-Ratelimit-Limit", strconv.FormatInt(w.Limit, 10))
		h.Set("X-Ratelimit-Remaining", strconv.FormatInt(w.Remaining, 10))
		// Rounded up, as Retry-After: a client that waits until Reset finds a ban over.
		h.Set("X-Ratelimit-Reset", strconv.FormatInt(w.End.Add(time.Second-1).Unix(), 10))
		h.Set("Ratelimit", `"`+w.Name+`";r=`+strconv.FormatInt(w.Remaining, 10)+";t="+strconv.FormatInt(secs, 10))
		h.Set("Ratelimit-Policy", policyItem(d.Minute)+", "+policyItem(d.Day))
		if res.Status == http.StatusTooManyRequests && !ex.noRetryAfter {
			h.Set("Retry-After", strconv.FormatInt(secs, 10))
		}
	}
	switch ex.route {
	case petRoute: // RFC 9745, RFC 8594, and the migration notes
		h.Set("Deprecation", "@"+strconv.FormatInt(o.Sunset.DeprecatedAt.Unix(), 10))
		h.Set("Sunset", o.Sunset.SunsetAt.UTC().Format(http.TimeFormat))
		h.Set("Link", "<"+o.Sunset.Link+`>; rel="sunset"`)
	case eventsRoute: // a page or a stream by Accept: caches must key on it (RFC 9110 §12.5.5)
		h.Add(echo.HeaderVary, echo.HeaderAccept)
	}
	if res.Status == http.StatusServiceUnavailable {
		h.Set("Retry-After", strconv.Itoa(retryAfterUnavailable))
	}
	stream := h.Get(echo.HeaderContentType) == eventStreamType
	if res.Status >= 400 || stream {
		h.Set("Cache-Control", "no-store")
	}
	if len(ex.req.TransferEncoding) > 0 { // it may have carried a Content-Length Go removed: RFC 9112 §6.1
		h.Set(echo.HeaderConnection, "close")
	}
	if len(o.cors) > 0 && ex.base { // CORS on: the answer differs by Origin
		h.Add(echo.HeaderVary, "Origin")
		if origin := o.cors.allowed(ex.req); origin != "" {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		}
	}
	if stream {
		ex.opened = o.Now() // its 200 is committed: the stream is open
	}
}

// policyItem is w as an item of the RateLimit-Policy header: "name";q=limit;w=seconds.
func policyItem(w ratelimit.Window) string {
	return `"` + w.Name + `";q=` + strconv.FormatInt(w.Limit, 10) + ";w=" + strconv.FormatInt(w.Seconds(), 10)
}

// label is the request's metrics label: its operation's, a route outside the bases, or "unknown".
func (ex *exchange) label() string {
	switch {
	case ex.op != nil:
		return ex.op.label
	case !ex.base && ex.route != "unmatched":
		return ex.route
	}
	return "unknown"
}

// validRequestID accepts the ids a client may choose: none that forges a log line (echo's keeps any).
var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`).MatchString

// Observer is told what the service does, for metrics; internal/metrics implements it.
type Observer interface {
	Request(operation string, status int, took time.Duration) // operation: exchange.label; took: a stream's, to its status
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

// startSpan starts a server span, a child of the client's traceparent, named and described by
// OpenTelemetry's HTTP server conventions: no name from a path or an unknown method.
func (o *observer) startSpan(c echo.Context, ctx context.Context) (context.Context, trace.Span) {
	req := c.Request()
	method, name := req.Method, req.Method
	attrs := []attribute.KeyValue{attribute.String("url.scheme", c.Scheme()), attribute.String("url.path", req.URL.Path)}
	if !knownMethods[method] {
		method, name = "_OTHER", "HTTP"
		attrs = append(attrs, attribute.String("http.request.method_original", req.Method))
	}
	attrs = append(attrs, attribute.String("http.request.method", method))
	if route := c.Path(); route != "" && route != "/*" && matchesTemplate(c) {
		name += " " + route
		attrs = append(attrs, attribute.String("http.route", route))
	}
	ctx = otel.GetTextMapPropagator().Extract(ctx, propagation.HeaderCarrier(req.Header)) // as tracing.Start installs it
	return o.Tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
}

// knownMethods are RFC 9110's and PATCH, the set the conventions name.
var knownMethods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "DELETE": true,
	"CONNECT": true, "OPTIONS": true, "TRACE": true, "PATCH": true}

// endSpan names the caller's kind and admit's outcome, never the key.
func endSpan(span trace.Span, ex *exchange, status int) {
	span.SetAttributes(attribute.Int("http.response.status_code", status))
	switch {
	case ex.key != nil:
		span.SetAttributes(attribute.String("orderd.caller", "key"))
	case ex.addr != "":
		span.SetAttributes(attribute.String("orderd.caller", "address"))
	}
	if ex.rateLimit != "" {
		span.SetAttributes(attribute.String("orderd.rate_limit", ex.rateLimit))
	}
	if status >= 500 && ex.Err() == nil { // a client that hung up is answered 503, no fault of the server's
		span.SetStatus(codes.Error, "")
		span.SetAttributes(attribute.String("error.type", strconv.Itoa(status)))
	}
}
