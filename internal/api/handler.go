// Package api is the HTTP face of the service: each version's operations, the steps before them, its errors.
package api

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/petstore/orderd"
	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/genv2"
	"github.com/petstore/orderd/internal/docs"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/pagetoken"
	"github.com/petstore/orderd/internal/ratelimit"
)

// The bases of openapi.yaml's and openapi-v2.yaml's operations.
const (
	BasePath   = "/v1"
	BasePathV2 = "/v2"
)

// Config is what the HTTP layer needs: interfaces, for the stores may be in memory or remote.
type Config struct {
	Orders           order.Store      // read through an order.View: from memory, kept current
	PageTokens       *pagetoken.Codec // version 2's page tokens; a deployment shares its secret
	Events           order.EventLog   // the log of changes to Orders, kept by the same store; each stream waits on it (order.SharedWaits)
	Pets             order.PetStore
	Keys             order.KeyStore
	Limiter          ratelimit.Limiter
	Begin            func(context.Context) context.Context // a request's one round trip to the stores (order.Begin, Redis); admit confirms the key
	Sunset           Sunset
	CORSAllowOrigins []string                    // the origins whose pages may call the API (scheme://host[:port]); none: CORS off
	TrustedProxies   []*net.IPNet                // the peers whose X-Forwarded-For names the client
	IPv6Prefix       int                         // groups keyless IPv6 callers; ratelimit.DefaultIPv6Prefix when not 1 to 128
	Ready            func(context.Context) error // whether the stores answer (/readyz); nil: always
	Observer         Observer                    // told of requests, decisions and outcomes, for metrics
	Metrics          http.Handler                // served at /metrics when set
	Logger           *slog.Logger
	AccessLog        io.Writer        // a JSON line per request while Logger is enabled at INFO; none when nil
	Now              func() time.Time // of the limiter, the sunset and durations; time.Now by default
	Tracer           trace.Tracer     // when set, a span per request
	MaxStreamsPerKey int              // open event streams per key here; DefaultMaxStreamsPerKey when 0
	StreamRecheck    time.Duration    // how often a stream checks its key; DefaultStreamRecheck when 0
	Closing          <-chan struct{}  // once closed, every event stream ends: shutdown
	Draining         <-chan struct{}  // once closed, /readyz answers 503 so that balancers stop sending here
}

// New returns the service's HTTP handler (docs/design.md, "One request's path").
func New(cfg Config) (*echo.Echo, error) {
	if cfg.Orders == nil || cfg.Events == nil || cfg.Pets == nil || cfg.Keys == nil || cfg.Limiter == nil || cfg.PageTokens == nil {
		return nil, errors.New("api: the orders (and their events), pets and keys stores, a limiter and a page-token codec are required")
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	cfg.Observer = cmp.Or(cfg.Observer, Observer(noObserver{}))
	cfg.MaxStreamsPerKey = cmp.Or(cfg.MaxStreamsPerKey, DefaultMaxStreamsPerKey)
	cfg.StreamRecheck = cmp.Or(cfg.StreamRecheck, DefaultStreamRecheck)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	ops, err := loadContract()
	if err != nil {
		return nil, err
	}
	s := &Server{Config: &cfg, orders: order.NewView(cfg.Orders), ops: ops, cors: map[string]bool{},
		perKey: map[string]int{}, writeTimeout: 2 * heartbeatEvery}
	for _, o := range cfg.CORSAllowOrigins {
		if err := CheckOrigin(o); err != nil {
			return nil, fmt.Errorf("api: CORS origin: %w", err)
		}
		s.cors[o] = true
	}
	if cfg.AccessLog != nil {
		s.access = slog.New(slog.NewJSONHandler(cfg.AccessLog, nil))
	}

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(io.Discard)
	e.HTTPErrorHandler = errorHandler(cfg.Logger)
	if e.IPExtractor = echo.ExtractIPDirect(); len(cfg.TrustedProxies) > 0 { // not echo's XFF: a hop with a port or zone fools it
		e.IPExtractor = func(r *http.Request) string {
			return ratelimit.ClientAddr(r.RemoteAddr, r.Header.Values(echo.HeaderXForwardedFor), cfg.TrustedProxies)
		}
	}
	routes := routes{e}
	health(routes, cfg.Ready, cfg.Draining)
	docs.Register(routes, docs.Document{Name: "v2", URL: BasePathV2 + "/openapi.yaml"}, docs.Document{Name: "v1", URL: BasePath + "/openapi.yaml"})
	if cfg.Metrics != nil {
		routes.GET("/metrics", echo.WrapHandler(cfg.Metrics))
	}
	gen.RegisterHandlersWithOptions(routes, gen.NewStrictHandler(s, nil), gen.RegisterHandlersOptions{BaseURL: BasePath})
	genv2.RegisterHandlersWithOptions(routes, genv2.NewStrictHandler(&ServerV2{v1: s}, nil), genv2.RegisterHandlersOptions{BaseURL: BasePathV2})

	e.Use(s.observe, recoverPanics(cfg.Logger)) // the steps, outermost first, after echo's routing
	if len(s.cors) > 0 {
		e.Use(s.preflight)
	}
	e.Use(s.admit, conform)
	return e, nil
}

// routes registers every GET route for HEAD too; Go's server drops the body (RFC 9110 §9.3.2).
type routes struct{ *echo.Echo }

func (r routes) GET(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	r.Echo.HEAD(path, h, m...)
	return r.Echo.GET(path, h, m...)
}

// File serves a file of /docs (docs.Router), gzipped once.
func (r routes) File(path, contentType string, body []byte, m ...echo.MiddlewareFunc) {
	e := newFile(body, contentType)
	r.GET(path, func(c echo.Context) error { return e.write(c.Response(), c.Request()) }, m...)
}

func recoverPanics(log *slog.Logger) echo.MiddlewareFunc {
	return middleware.RecoverWithConfig(middleware.RecoverConfig{DisableStackAll: true, DisablePrintStack: true,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			log.Error("panic", slog.String("route", c.Path()), slog.String("error", err.Error()), slog.String("stack", string(stack)))
			return err
		},
	})
}

// errDraining is /readyz's answer once shutdown began: no store failed (observe counts none).
var errDraining = &problem{http.StatusServiceUnavailable, gen.ErrorCodeServiceUnavailable, "not ready: shutting down"}

// health serves /healthz and /readyz; not ready is not logged, the stores' own log tells of it.
func health(e routes, ready func(context.Context) error, draining <-chan struct{}) {
	e.GET("/healthz", func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]string{"status": "ok"}) })
	e.GET("/readyz", func(c echo.Context) error {
		select {
		case <-draining: // never closed when nil
			return errDraining
		default:
		}
		if ready != nil {
			ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
			defer cancel()
			if err := ready(ctx); err != nil {
				msg := msgUnavailable
				if fault := (*order.Fault)(nil); errors.As(err, &fault) {
					msg = "not ready: " + fault.Public // a fault is named, without paths
				}
				return &problem{http.StatusServiceUnavailable, gen.ErrorCodeServiceUnavailable, msg}
			}
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
	})
}

// exchange is the request's context (ctx.(*exchange)): observe makes it, admit fills it in.
type exchange struct {
	context.Context
	s            *Server
	req          *http.Request
	res          *echo.Response
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

// observe is the outermost step: the exchange, the span, the header hook, errors, metrics, the access line.
func (s *Server) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req, res := c.Request(), c.Response()
		ctx, span := req.Context(), trace.Span(nil)
		if s.Tracer != nil {
			ctx, span = s.startSpan(c, ctx)
			defer span.End()
		}
		if s.Begin != nil {
			ctx = s.Begin(ctx)
		}
		ex := &exchange{Context: ctx, s: s, req: req, res: res, start: s.Now(), route: c.Path()}
		ex.op = s.ops[req.Method+" "+ex.route]
		for _, v := range orderd.Versions { // under a base, requests are admitted
			ex.base = ex.base || req.URL.Path == v.Base || strings.HasPrefix(req.URL.Path, v.Base+"/")
		}
		if ex.route == "" || ex.route == "/*" {
			ex.route = "unmatched"
		}
		if ex.id = req.Header.Get(echo.HeaderXRequestID); !validRequestID(ex.id) {
			ex.id = rand.Text()
		}
		c.SetRequest(req.WithContext(ex))
		res.Before(ex.writeHeaders)
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		if span != nil {
			endSpan(span, ex, res.Status)
		}
		end := s.Now()
		label := "unknown" // for metrics: the operation's, or a route outside the bases
		if ex.op != nil {
			label = ex.op.label
		} else if !ex.base && ex.route != "unmatched" {
			label = ex.route
		}
		s.Observer.Request(label, res.Status, cmp.Or(ex.opened, end).Sub(ex.start)) // a stream's: until it opened
		if res.Status == http.StatusServiceUnavailable && !requestEnded(ex, err) && err != errDraining {
			s.Observer.StoreError(label) // neither a client that hung up nor a shutdown is a store that failed
		}
		if s.access == nil || !s.Logger.Enabled(ex, slog.LevelInfo) {
			return nil
		}
		attrs := append(make([]slog.Attr, 0, 9), slog.String("request_id", ex.id), slog.String("method", req.Method),
			slog.String("route", ex.route), slog.Int("status", res.Status),
			slog.Float64("duration_ms", float64(end.Sub(ex.start).Microseconds())/1000), slog.Int64("bytes", res.Size))
		if ex.key != nil {
			attrs = append(attrs, slog.String("key_name", ex.key.Name), slog.String("key_prefix", ex.key.Prefix))
		} else if ex.addr != "" {
			attrs = append(attrs, slog.String("client", ex.addr))
		}
		if sc := trace.SpanContextFromContext(ex); s.Tracer != nil && sc.HasTraceID() {
			attrs = append(attrs, slog.String("trace_id", sc.TraceID().String())) // the line finds its trace
		}
		s.access.LogAttrs(ex, slog.LevelInfo, "request", attrs...)
		return nil
	}
}

// validRequestID accepts the ids a client may choose: none that forges a log line (echo's keeps any).
var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`).MatchString

// requestEnded reports whether err is the request's own end, no failure of a store.
func requestEnded(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}

// Observer is told what the service does, for metrics; internal/metrics implements it.
type Observer interface {
	Request(operation string, status int, took time.Duration) // took: a stream's, to its status
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

// startSpan starts a server span by OpenTelemetry's HTTP conventions: no name from a path or an unknown method.
func (s *Server) startSpan(c echo.Context, ctx context.Context) (context.Context, trace.Span) {
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
	return s.Tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
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

// CORS for the versions' bases; not echo's, which answers 204 to any OPTIONS. Keys travel in Authorization.
const (
	corsAllowHeaders  = "Authorization, If-None-Match, Last-Event-ID, X-Request-Id, traceparent, tracestate"
	corsExposeHeaders = "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit, RateLimit-Policy, " +
		"Retry-After, ETag, Link, X-Request-Id, Orders-Event-Id, Deprecation, Sunset, WWW-Authenticate, Allow"
	corsMaxAge = "600" // seconds a browser may keep a preflight's answer
)

// CheckOrigin accepts an origin as a browser sends it, any other would never match; not "*".
func CheckOrigin(s string) error {
	if s == "*" {
		return fmt.Errorf(`"*" is not accepted: the API is called with API keys, so name each origin allowed to call it`)
	}
	u, err := url.Parse(s)
	host := ""
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		host = strings.ToLower(u.Hostname())
		if a, err := netip.ParseAddr(host); err == nil {
			host = a.String()
			if a.Is6() {
				host = "[" + host + "]"
			}
		} else if strings.Trim(host, "0123456789.") == "" {
			host = "" // an IPv4 address in a form the parse refuses ("127.1")
		}
		if n, err := strconv.Atoi(u.Port()); err == nil && n > 0 && n < 1<<16 && n != map[string]int{"http": 80, "https": 443}[u.Scheme] {
			host += ":" + strconv.Itoa(n) // else no port, or one a browser would not write: no match
		}
	}
	if host == "" || s != u.Scheme+"://"+host {
		return fmt.Errorf("%q is no origin as a browser sends it: want scheme://host[:port] in lower case, http or https, "+
			"no path, no default port, the port and an IP address in their shortest forms (https://shop.example)", s)
	}
	return nil
}

// preflight answers 204, before admit (it comes without the key), an allowed origin's preflight to a known route.
func (s *Server) preflight(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.Method != http.MethodOptions || req.Header.Get("Access-Control-Request-Method") == "" ||
			!s.cors[req.Header.Get("Origin")] || !req.Context().(*exchange).base {
			return next(c)
		}
		methods := allowOf(c)
		if methods == "" || !matchesTemplate(c) || headerBytes(req) > MaxHeaderBytes {
			return next(c) // conform's 404, 405 or 431
		}
		h := c.Response().Header()
		h.Set("Access-Control-Allow-Methods", methods)
		h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
		h.Set("Access-Control-Max-Age", corsMaxAge)
		return c.NoContent(http.StatusNoContent)
	}
}

// Why a request carries no usable key.
var (
	errNoCredentials = &problem{http.StatusUnauthorized, gen.ErrorCodeUnauthorized, "no API key: send the header Authorization: Bearer API_KEY"}
	errMalformed     = &problem{http.StatusUnauthorized, gen.ErrorCodeUnauthorized, "malformed Authorization header: expected Bearer API_KEY"}
	errUnknownKey    = &problem{http.StatusUnauthorized, gen.ErrorCodeUnauthorized, "unknown or revoked API key"}
)

// anonymousLimits apply to callers without a valid key, by address: they slow key guessing.
var anonymousLimits, _ = order.LimitsFor(order.Free, order.Limits{})

// admit decides who calls and whether they may, before conform: an unknown route counts too.
func (s *Server) admit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ex := c.Request().Context().(*exchange)
		if !ex.base {
			return next(c)
		}
		if ex.addr = c.RealIP(); ex.op != nil && ex.op.unlimited {
			return next(c)
		}
		keyErr := error(nil) // the lookup may answer provisionally; the limiter's round trip confirms it
		if token, err := bearerToken(ex.req.Header.Values("Authorization")); err != nil {
			keyErr = err
		} else if ex.found, err = s.Keys.Lookup(ex, order.HashOf(token)); err != nil {
			keyErr = lookupError(err)
		} else {
			ex.key = &ex.found
		}
		caller, limits := s.caller(ex)
		decide, streamsFull := s.Limiter.Allow, false
		if ex.key != nil && ex.op != nil && ex.route == eventsRoute && acceptsEventStream(ex.req.Header) { // a GET or HEAD
			if name := ex.key.Name; s.holdStream(name, 1) {
				defer s.holdStream(name, -1)
			} else {
				decide, streamsFull = s.Limiter.Peek, true // past its key's places a stream is refused, counted in no window
			}
		}
		d, err := ratelimit.Decision{}, keyErr
		if !noDecision(ex, err) { // else who calls is unknown: no limiting by address
			d, err = decide(ex, caller, limits)
		}
		if err == nil && ex.key != nil && s.Begin != nil {
			if err = order.Confirm(ex); err != nil { // the key changed since the lookup
				ex.key, keyErr, streamsFull = nil, lookupError(err), false
				caller, limits = s.caller(ex)
				if err = keyErr; !noDecision(ex, err) {
					d, err = s.Limiter.Allow(ex, caller, limits)
				}
			}
		}
		switch {
		case noDecision(ex, err): // its headers show the plan as if nothing were counted
			ex.limited, ex.limit = true, ratelimit.Decide(ratelimit.Outcome{}, limits, s.Now())
			if !requestEnded(ex, err) {
				ex.rateLimit = "unavailable"
				s.Observer.RateLimit(ex.rateLimit)
			}
			return err
		case err != nil:
			return err
		}
		ex.limited, ex.limit, ex.rateLimit = true, d, "admitted"
		refusal, secs := error(nil), int64(d.RetryAfter.Seconds())
		switch {
		case d.Banned:
			ex.rateLimit, refusal = "banned", &problem{http.StatusTooManyRequests, gen.ErrorCodeApiKeyBanned,
				fmt.Sprintf("temporarily banned for sending requests before Retry-After had passed; retry after %d seconds", secs)}
		case !d.Allowed:
			ex.rateLimit, refusal = "limited", &problem{http.StatusTooManyRequests, gen.ErrorCodeRateLimitExceeded,
				fmt.Sprintf("rate limit of %d requests per %s exceeded; retry after %d seconds", d.Binding.Limit, d.Binding.Name, secs)}
		case streamsFull: // a place frees when one of the key's streams ends, which no clock tells
			ex.rateLimit, ex.noRetryAfter = "", true
			return &problem{http.StatusTooManyRequests, gen.ErrorCodeTooManyStreams, fmt.Sprintf(
				"this key holds %d streams open on this instance, as many as it may; close one first", s.MaxStreamsPerKey)}
		case keyErr != nil && (ex.op == nil || !ex.op.public):
			refusal = keyErr
		}
		s.Observer.RateLimit(ex.rateLimit)
		if refusal != nil {
			return refusal
		}
		return next(c)
	}
}

func (s *Server) caller(ex *exchange) (string, order.Limits) {
	if ex.key != nil {
		return ratelimit.KeyCaller(string(ex.key.Hash)), ex.key.Limits()
	}
	return ratelimit.AddrCaller(ex.addr, s.IPv6Prefix), anonymousLimits
}

// noDecision reports whether err leaves the request without a rate-limit decision.
func noDecision(ctx context.Context, err error) bool {
	return errors.Is(err, order.ErrUnavailable) || requestEnded(ctx, err)
}

func lookupError(err error) error {
	if errors.Is(err, order.ErrKeyNotFound) {
		return errUnknownKey
	}
	return fmt.Errorf("looking up a key: %w", err)
}

// bearerToken is the token68 of the Authorization field (RFC 6750), which keeps control characters out.
func bearerToken(values []string) (string, error) {
	if len(values) == 0 {
		return "", errNoCredentials
	}
	scheme, token, _ := strings.Cut(values[0], " ")
	token = strings.TrimLeft(token, " ") // "" without a space: no token68
	if len(values) > 1 || !strings.EqualFold(scheme, "Bearer") || !isToken68(token) {
		return "", errMalformed
	}
	return token, nil
}

// isToken68 reports whether s is 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isToken68(s string) bool {
	body := strings.TrimRight(s, "=")
	return body != "" && len(s) <= 512 && strings.Trim(body, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/") == ""
}
