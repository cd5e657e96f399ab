// Package api is the HTTP face of the service: each version's operations (openapi.yaml at /v1,
// openapi-v2.yaml at /v2), the steps in front of them, and the one place errors become Errors.
package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"go.opentelemetry.io/otel/trace"

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
	Orders     order.Store      // read through an order.View: from memory, kept current
	PageTokens *pagetoken.Codec // version 2's page tokens; a deployment shares its secret
	Events     order.EventLog   // the log of changes to Orders, kept by the same store
	Pets       order.PetStore
	Keys       order.KeyStore
	Limiter    ratelimit.Limiter
	Sunset     Sunset
	// The origins whose pages may call the API (scheme://host[:port]); none: CORS off.
	CORSAllowOrigins []string
	TrustedProxies   []*net.IPNet                // the peers whose X-Forwarded-For names the client
	IPv6Prefix       int                         // groups keyless IPv6 callers; ratelimit.DefaultIPv6Prefix when 0
	Ready            func(context.Context) error // whether the stores answer (/readyz); nil: always
	Observer         Observer                    // told of requests, decisions and outcomes, for metrics
	Metrics          http.Handler                // served at /metrics when set
	Logger           *slog.Logger
	AccessLog        io.Writer        // a JSON line per request while Logger is enabled at INFO; none when nil
	Now              func() time.Time // of the limiter, the sunset and durations; time.Now by default
	Tracer           trace.Tracer     // when set, a span per request (observe.go)
	MaxStreamsPerKey int              // open event streams per key here; DefaultMaxStreamsPerKey when 0
	StreamRecheck    time.Duration    // how often a stream checks its key; DefaultStreamRecheck when 0
	Closing          <-chan struct{}  // once closed, every event stream ends: shutdown
	// Draining, once closed, makes /readyz answer 503 while everything else is served, so that
	// balancers stop sending here before the shutdown.
	Draining <-chan struct{}
}

// New returns the service's HTTP handler (docs/design.md, "One request's path").
func New(cfg Config) (*echo.Echo, error) {
	if cfg.Orders == nil || cfg.Events == nil || cfg.Pets == nil || cfg.Keys == nil || cfg.Limiter == nil || cfg.PageTokens == nil {
		return nil, errors.New("api: the orders (and their events), pets and keys stores, a limiter and a page-token codec are required")
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	cfg.Observer = cmp.Or(cfg.Observer, Observer(noObserver{}))
	cfg.IPv6Prefix = cmp.Or(cfg.IPv6Prefix, ratelimit.DefaultIPv6Prefix)
	cfg.MaxStreamsPerKey = cmp.Or(cfg.MaxStreamsPerKey, DefaultMaxStreamsPerKey)
	cfg.StreamRecheck = cmp.Or(cfg.StreamRecheck, DefaultStreamRecheck)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := ratelimit.CheckIPv6Prefix(cfg.IPv6Prefix); err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	cors, err := newOrigins(cfg.CORSAllowOrigins)
	if err != nil {
		return nil, err
	}
	ct, err := loadContract()
	if err != nil {
		return nil, err
	}

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(io.Discard)
	e.HTTPErrorHandler = errorHandler(cfg.Logger)
	// Not echo's ExtractIPFromXFFHeader: a hop with a port or a zone makes it answer the proxy.
	if e.IPExtractor = echo.ExtractIPDirect(); len(cfg.TrustedProxies) > 0 {
		e.IPExtractor = func(r *http.Request) string {
			return ratelimit.ClientAddr(r.RemoteAddr, r.Header.Values(echo.HeaderXForwardedFor), cfg.TrustedProxies)
		}
	}

	routes := routes{e}
	health(routes, cfg.Ready, cfg.Draining)
	docs.Register(routes,
		docs.Document{Name: "v2", URL: BasePathV2 + "/openapi.yaml"},
		docs.Document{Name: "v1", URL: BasePath + "/openapi.yaml"})
	if cfg.Metrics != nil {
		routes.GET("/metrics", echo.WrapHandler(cfg.Metrics))
	}
	orders := order.NewView(cfg.Orders)
	v1 := &Server{Config: &cfg, orders: orders, lists: &listCache{orders: orders}}
	gen.RegisterHandlersWithOptions(routes, gen.NewStrictHandler(v1, nil), gen.RegisterHandlersOptions{BaseURL: BasePath})
	streams := newStreams(cfg)
	v2 := &ServerV2{v1: v1, streams: streams}
	genv2.RegisterHandlersWithOptions(routes, genv2.NewStrictHandler(v2, nil), genv2.RegisterHandlersOptions{BaseURL: BasePathV2})

	// The steps, outermost first; echo has routed the request before them.
	e.Use(newObserver(&cfg, ct, cors).observe, recoverPanics(cfg.Logger))
	if len(cors) > 0 {
		e.Use(preflight(cors))
	}
	e.Use(admit(&cfg, streams), conform)
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

// recoverPanics turns a panic into an error (a 500) and logs it with its stack.
func recoverPanics(log *slog.Logger) echo.MiddlewareFunc {
	return middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisableStackAll:   true,
		DisablePrintStack: true,
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
	e.GET("/healthz", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	})
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
