package service

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/metrics"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/pagetoken"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/tracing"
	"github.com/petstore/orderd/internal/webhook"
)

// Service is the Store Order Service: Open makes it, Run serves, Close releases what Open took.
type Service struct {
	cfg             Config
	log             *slog.Logger
	stores          *Stores
	metrics         *metrics.Metrics
	storeLog        *storeLog         // one line for an outage or a fault, whoever meets it
	traces          *tracing.Provider // nil unless the OTEL_* environment turns tracing on
	ln, metricsLn   net.Listener      // metricsLn: nil unless Config.MetricsAddr is set
	srv, metricsSrv *http.Server
	draining        chan struct{} // closed when Run's ctx ends: /readyz answers 503 from then on
	closing         chan struct{} // closed when Run begins to shut down: event streams end
}

// Open opens the stores, makes the handler and binds the listeners for Run. A Redis that does
// not answer yet is logged and answered 503 until it does. A bad setting or file is a *ConfigError.
func Open(ctx context.Context, cfg Config) (_ *Service, err error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	} else {
		redisstore.SetLogger(cfg.Logger)
	}
	s := &Service{cfg: cfg, log: cfg.Logger, metrics: metrics.New(), draining: make(chan struct{}), closing: make(chan struct{})}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	m := s.metrics
	if s.stores, err = OpenStores(cfg.Store); err != nil {
		return nil, err
	}
	var tracer trace.Tracer // nil: no tracing step at all in the handler
	if s.traces, err = tracing.Start(ctx, cfg.Version, s.log); err != nil {
		return nil, configError(fmt.Errorf("tracing: %w", err))
	}
	if s.traces != nil {
		tracer = s.traces.Tracer("github.com/petstore/orderd/internal/api")
		if err = s.stores.trace(s.traces); err != nil {
			return nil, err
		}
	}
	s.storeLog = newStoreLog(s.log, cfg.Now, m.StoreFault)
	s.stores.observe(s.log, s.storeLog.fault)
	ready := func(ctx context.Context) error {
		err := s.stores.Ready(ctx)
		if fault := (*order.Fault)(nil); !errors.As(err, &fault) { // a fault was logged when the store found it
			s.storeLog.outage(err)
		}
		return err
	}
	_ = ready(ctx) // a Redis that does not answer yet is the start of an outage, warned of like any other
	var limiter ratelimit.Limiter = ratelimit.NewMemory(cfg.Now, cfg.Ban, ratelimit.MaxAnonymous(cfg.MaxAnonymousCallers), ratelimit.OnForget(m.ForgottenCaller))
	if rdb := s.stores.rdb; rdb != nil { // Redis's, shared by every instance, falling back as cfg says
		fallback := limiter
		if cfg.LimiterFallback != FallbackMemory {
			fallback = nil
		}
		if limiter, err = redisstore.NewLimiter(rdb, redisstore.LimiterOptions{Prefix: cfg.Store.RedisPrefix, Timeout: cfg.Store.RedisTimeout,
			Clock: cfg.Now, Ban: cfg.Ban, Fallback: fallback, OnFallback: m.Fallback, Logger: cfg.Logger}); err != nil {
			return nil, configError(err)
		}
	}
	tokens, err := pageTokens(cfg.PageTokenSecret, s.stores)
	if err != nil {
		return nil, err
	}
	var metricsOnMain http.Handler
	if cfg.MetricsAddr == "" {
		metricsOnMain = m.Handler()
	}
	handler, err := api.New(api.Config{
		Observer: m, Metrics: metricsOnMain, Orders: s.stores.Orders, Events: s.stores.Events,
		MaxStreamsPerKey: cfg.Events.MaxStreamsPerKey, StreamRecheck: cfg.Events.StreamRecheck,
		Closing: s.closing, Draining: s.draining, PageTokens: tokens, Pets: s.stores.Pets, Keys: s.stores.Keys,
		Limiter: limiter, Ready: ready, TrustedProxies: cfg.TrustedProxies, CORSAllowOrigins: cfg.CORSAllowOrigins,
		IPv6Prefix: cfg.IPv6Prefix, Sunset: cfg.Sunset, Logger: s.log, AccessLog: cfg.AccessLog, Now: cfg.Now, Tracer: tracer,
	})
	if err != nil {
		return nil, err
	}
	if s.ln, err = net.Listen("tcp", cfg.Addr); err != nil {
		return nil, err
	}
	s.srv = HTTPServer(handler)
	s.srv.ErrorLog = slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)
	if cfg.MetricsAddr != "" {
		if s.metricsLn, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			return nil, err
		}
		// /metrics alone: a probe pointed at another path of this listener by mistake fails.
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", m.Handler())
		s.metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 30 * time.Second}
	}
	return s, nil
}

// pageTokens returns the codec of v2's page tokens under secret, or else under the stores'
// secret, which every instance on them shares untold. A secret too short is a *ConfigError.
func pageTokens(secret string, s *Stores) (*pagetoken.Codec, error) {
	if secret == "" {
		return pagetoken.FromStore(s.Secrets), nil
	}
	c, err := pagetoken.New([]byte(secret))
	return c, configError(err)
}

// HTTPServer is the server the API is served by, with its limits; bench/ceiling serves by
// the same, so that what a limit costs a request is not counted as orderd's work.
func HTTPServer(handler http.Handler) *http.Server {
	return &http.Server{
		Handler: handler,
		// A slow or huge client must not hold a connection or memory for long.
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    api.MaxHeaderBytes, // Go reads 4 KiB past it; the handler refuses those exactly
	}
}

// Addr is the address the API listens on: Config.Addr with the port it picked.
func (s *Service) Addr() string { return s.ln.Addr().String() }

// URL is the base URL of the service on its address, http://host:port.
func (s *Service) URL() string { return "http://" + s.Addr() }

// MetricsAddr is the address of the metrics listener, or "" when /metrics is on Addr.
func (s *Service) MetricsAddr() string {
	if s.metricsLn == nil {
		return ""
	}
	return s.metricsLn.Addr().String()
}

// Run serves until ctx ends; then /readyz answers 503 while everything else is served for
// Config.ShutdownDelay, then the listeners close and requests in flight have
// Config.ShutdownTimeout to finish. It returns nil after a clean shutdown.
func (s *Service) Run(ctx context.Context) error {
	served := make(chan error, 2)
	go func() { served <- s.srv.Serve(s.ln) }()
	s.log.Info("listening", slog.String("addr", s.Addr()), slog.String("mode", s.stores.Mode()))
	if s.metricsSrv != nil {
		go func() { served <- s.metricsSrv.Serve(s.metricsLn) }()
		defer s.metricsSrv.Close()
		s.log.Info("metrics listening", slog.String("addr", s.MetricsAddr()))
	}
	background, stopBackground := context.WithCancel(ctx)
	go s.trimEvents(background)
	delivered := make(chan struct{})
	go func() { defer close(delivered); s.deliverer().Run(background) }()
	// Before Close closes the stores: deliveries in flight are cut, and the leases released
	// for another instance to take.
	defer func() { stopBackground(); <-delivered }()

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	close(s.draining)
	if d := s.cfg.ShutdownDelay; d > 0 {
		// Balancers see /readyz fail and stop sending; what they send meanwhile is answered.
		// Each answer closes its connection: a client holding one to this instance (through
		// kube-proxy, say) connects again, to an instance that stays, before the listener closes.
		s.srv.SetKeepAlivesEnabled(false)
		s.log.Info("draining: readiness 503", slog.String("delay", d.String()))
		select {
		case err := <-served:
			return err
		case <-time.After(d):
		}
	}
	s.log.Info("shutting down", slog.String("timeout", s.cfg.ShutdownTimeout.String()))
	close(s.closing) // a stream is never idle: Shutdown would wait for it to its timeout
	shutdownCtx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := s.srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	s.log.Info("stopped")
	return nil
}

// Close closes the listeners and servers at once, then the stores: after Run, or instead of it.
func (s *Service) Close() error {
	for _, srv := range []*http.Server{s.srv, s.metricsSrv} {
		if srv != nil {
			srv.Close()
		}
	}
	for _, ln := range []net.Listener{s.ln, s.metricsLn} {
		if ln != nil {
			ln.Close() // already closed if it was served
		}
	}
	var err error
	if s.stores != nil {
		err = s.stores.Close()
	}
	if s.traces != nil { // the last spans are sent, within a bound
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if terr := s.traces.Shutdown(ctx); terr != nil {
			s.log.Warn("tracing: the last spans were not all sent", slog.String("error", terr.Error()))
		}
	}
	return err
}

// trimEvents applies the log's retention at start and then every minute until ctx ends.
// Every instance does: a trim is idempotent, and the log's store makes it atomic.
func (s *Service) trimEvents(ctx context.Context) {
	r := s.cfg.Events.Retention
	if r == (order.Retention{}) {
		return
	}
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		n, err := s.stores.Events.Trim(ctx, r)
		switch {
		case ctx.Err() != nil:
		case errors.Is(err, order.ErrUnavailable):
			s.storeLog.outage(err) // one warning for the outage, as readiness gives it
		case err != nil:
			s.log.Warn("event log: the retention could not be applied; trying again in a minute", slog.String("error", err.Error()))
		case n > 0:
			s.metrics.Trimmed(n)
			s.log.Info("event log: retention applied", slog.Int64("dropped", n))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// deliverer is this instance's webhook Deliverer. It names itself in the leases it holds by
// the host and the pid, for the operator, and a random part, for two processes are never one.
func (s *Service) deliverer() *webhook.Deliverer {
	host, _ := os.Hostname()
	cfg := s.cfg.Webhooks
	return webhook.NewDeliverer(webhook.Config{
		Store: s.stores.Webhooks, Events: s.stores.Events, Client: webhook.NewClient(cfg.AllowPrivate),
		Owner: fmt.Sprintf("%s/%d/%s", host, os.Getpid(), rand.Text()[:8]),
		Poll:  cfg.Poll, LeaseTTL: cfg.LeaseTTL, Schedule: cfg.Schedule, Observer: s.metrics, Logger: s.log,
	})
}
