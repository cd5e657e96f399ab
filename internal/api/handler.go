package api

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/petstore/orderd"
	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/docs"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
)

// BasePath is where the operations of openapi.yaml are served.
const BasePath = "/v1"

// petRoute is the echo route of the deprecated operation, whose every answer is marked.
const petRoute = BasePath + "/pets/:petId"

// Config is what the HTTP layer needs. Only interfaces: the stores may be in memory or remote.
type Config struct {
	Orders  order.Store
	Pets    order.PetStore
	Keys    auth.KeyStore
	Limiter ratelimit.Limiter
	Sunset  Sunset
	// TrustedProxies are the peers whose X-Forwarded-For names the client. None by default:
	// the header is anyone's to write, and the client address is what unauthenticated
	// callers are limited by.
	TrustedProxies []*net.IPNet
	// Ready reports whether the stores answer, for /readyz; nil means always ready.
	Ready func(context.Context) error
	// Observer is told of requests, decisions and outcomes (metrics); none by default.
	Observer Observer
	// Metrics, when set, is served at /metrics on this handler.
	Metrics http.Handler
	Logger  *slog.Logger
	Now     func() time.Time // for tests; time.Now by default
}

// New returns the service's HTTP handler. The chain follows decisions.md: identify the caller
// → rate limit → authenticate → route → validate → handle.
func New(cfg Config) (*echo.Echo, error) {
	if cfg.Orders == nil || cfg.Pets == nil || cfg.Keys == nil || cfg.Limiter == nil {
		return nil, errors.New("api: the orders, pets and keys stores and a limiter are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Observer == nil {
		cfg.Observer = noObserver{}
	}
	cfg.Sunset.prepare()

	doc, err := orderd.LoadOpenAPI()
	if err != nil {
		return nil, err
	}

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(io.Discard)
	e.HTTPErrorHandler = errorHandler(cfg.Logger)
	e.IPExtractor = clientAddress(cfg.TrustedProxies)

	e.Use(observe(cfg.Logger, cfg.Observer, operationsOf(doc)))
	// Bodies from 256 bytes are compressed for clients that accept gzip: the list, mostly;
	// error bodies are smaller. /metrics compresses itself.
	e.Use(middleware.GzipWithConfig(middleware.GzipConfig{
		MinLength: 256,
		Skipper:   func(c echo.Context) bool { return c.Path() == "/metrics" },
	}))
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisableStackAll:   true,
		DisablePrintStack: true,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			cfg.Logger.Error("panic", slog.String("route", c.Path()), slog.String("error", err.Error()),
				slog.String("stack", string(stack)))
			return err
		},
	}))
	e.Use(markDeprecated(cfg.Sunset.headers))
	e.Use(onlyUnderBase(identify(cfg.Keys)), onlyUnderBase(limit(cfg.Limiter, cfg.Now, cfg.Observer)), onlyUnderBase(authenticate(publicOperations(doc))), methodNotAllowed)

	health(e, cfg.Ready)
	docs.Register(e, BasePath+"/openapi.yaml")
	if cfg.Metrics != nil {
		e.GET("/metrics", echo.WrapHandler(cfg.Metrics))
	}
	srv := &Server{orders: cfg.Orders, lists: &listCache{orders: cfg.Orders}, pets: cfg.Pets, sunset: cfg.Sunset, now: cfg.Now, obs: cfg.Observer}
	gen.RegisterHandlersWithOptions(e, gen.NewStrictHandler(srv, nil), gen.RegisterHandlersOptions{
		BaseURL:              BasePath,
		OperationMiddlewares: validators(doc),
	})
	return e, nil
}

// onlyUnderBase applies m to requests under BasePath; health and metrics are outside it.
func onlyUnderBase(m echo.MiddlewareFunc) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		withM := m(next)
		return func(c echo.Context) error {
			p := c.Request().URL.Path
			if p == BasePath || strings.HasPrefix(p, BasePath+"/") {
				return withM(c)
			}
			return next(c)
		}
	}
}

// markDeprecated puts the deprecation headers on every answer of the deprecated operation,
// errors included, at the moment the status is written, so nothing later can drop them.
func markDeprecated(h sunsetHeaders) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if c.Path() == petRoute {
				res := c.Response()
				res.Before(func() { h.set(res.Header()) })
			}
			return next(c)
		}
	}
}

// clientAddress is the peer's address, or, when the peer is a trusted proxy, the address
// that the nearest untrusted hop in X-Forwarded-For names.
func clientAddress(trusted []*net.IPNet) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}
