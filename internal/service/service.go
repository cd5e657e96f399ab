// Package service wires the Store Order Service together: on Redis when the Config names one, else SQLite.
package service

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/redis/go-redis/extra/redisotel/v9"
	goredis "github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/metrics"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/pagetoken"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/sqlitestore"
	"github.com/petstore/orderd/internal/tracing"
	"github.com/petstore/orderd/internal/webhook"
)

// Config is what a service is made from: start from DefaultConfig. Open takes the settings unchecked.
type Config struct {
	Version             string              // the build's, for traces' service.version
	Addr                string              // host:port to listen on; port 0 picks a free one
	MetricsAddr         string              // when set, /metrics is served there instead of on Addr
	Store               StoreConfig         // where orders, pets and keys are kept
	Ban                 ratelimit.BanPolicy // when a caller sending too early is banned, how long
	LimiterFallback     string              // while Redis cannot be reached: "memory", each instance limits on its own, logged and counted; "fail", 503
	TrustedProxies      []*net.IPNet        // the peers whose X-Forwarded-For names the client
	CORSAllowOrigins    []string            // the origins whose pages may call the API; none: CORS off
	IPv6Prefix          int                 // groups callers without a key on IPv6, by network
	MaxAnonymousCallers int                 // callers without a key the in-process limiter remembers
	PageTokenSecret     string              // signs v2's page tokens; empty: the store's secret, made on first use
	Retention           order.Retention     // events older, or past the newest count, are dropped; 0: no bound
	MaxStreamsPerKey    int                 // the event streams one key holds open on an instance
	StreamRecheck       time.Duration       // how often a stream rechecks its key (no flag; 0: api's default)
	Webhooks            webhook.Config      // this instance's delivery; Open supplies the stores, owner, observer and logger
	Sunset              api.Sunset          // the schedule of the deprecated pets operation
	ShutdownTimeout     time.Duration       // how long requests in flight may take once Run's ctx ends
	ShutdownDelay       time.Duration       // how long Run serves, /readyz answering 503, for balancers to stop sending; 0: none
	Logger              *slog.Logger        // receives the service's JSON lines; none when nil
	AccessLog           io.Writer           // receives the access lines, JSON too, while Logger is at INFO; none when nil
	Now                 func() time.Time    // the clock of the limiter, the sunset and the durations (time.Now when nil): tests move it
}

// StoreConfig says where a deployment keeps everything: in Redis when RedisURL is set, else in DB.
type StoreConfig struct {
	RedisURL     string
	RedisPrefix  string        // starts every Redis key, so that deployments can share a Redis
	RedisTimeout time.Duration // bound on each Redis call
	DB           string        // the embedded mode's SQLite file
	CreateDB     bool          // makes a missing DB; otherwise a mistyped path is an error, not an empty store
}

// DefaultConfig is `orderd serve` without flags, but for ShutdownDelay: 0, so that tests stop at once.
func DefaultConfig() Config {
	return Config{
		Addr:                "127.0.0.1:8080",
		Ban:                 ratelimit.DefaultBanPolicy,
		LimiterFallback:     "memory",
		IPv6Prefix:          ratelimit.DefaultIPv6Prefix,
		MaxAnonymousCallers: ratelimit.DefaultMaxAnonymous,
		Sunset: api.Sunset{DeprecatedAt: time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC), SunsetAt: time.Date(2027, 7, 1, 0, 0, 0, 0, time.UTC),
			Link: "https://docs.petstore.example/orders/migrate-from-pets"},
		ShutdownTimeout:  15 * time.Second,
		Retention:        order.Retention{MaxAge: 7 * 24 * time.Hour, MaxCount: 1_000_000},
		MaxStreamsPerKey: api.DefaultMaxStreamsPerKey,
		Webhooks:         webhook.Config{LeaseTTL: webhook.DefaultLeaseTTL, Schedule: webhook.DefaultSchedule},
		Store:            StoreConfig{RedisPrefix: redisstore.DefaultPrefix, RedisTimeout: redisstore.DefaultTimeout, DB: "orderd.db"},
	}
}

// ConfigError is a setting or a data file the service cannot start with: retrying cannot help.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Service is the Store Order Service: Open makes it, Run serves, Close releases what Open took.
type Service struct {
	cfg      Config
	log      *slog.Logger
	stores   *Stores
	metrics  *metrics.Metrics
	storeLog *storeLog         // one line for an outage or a fault, whoever meets it
	traces   *tracing.Provider // nil unless the OTEL_* environment turns tracing on
	lns      []net.Listener    // the API's, then /metrics' own when Config.MetricsAddr is set
	srvs     []*http.Server    // one for each listener
	draining chan struct{}     // closed when Run's ctx ends: /readyz answers 503 from then on
	closing  chan struct{}     // closed when Run begins to shut down: event streams end
}

// Open opens the stores, makes the handler and binds the listeners. A bad store is a *ConfigError.
func Open(ctx context.Context, cfg Config) (_ *Service, err error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	} else {
		redisstore.SetLogger(cfg.Logger)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	stores, err := OpenStores(cfg.Store)
	if err != nil {
		return nil, err
	}
	stores.Events = order.SharedWaits(stores.Events) // one wait for every stream and webhook of this instance
	m := metrics.New()
	s := &Service{cfg: cfg, log: cfg.Logger, stores: stores, metrics: m, draining: make(chan struct{}), closing: make(chan struct{})}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	var tracer trace.Tracer // nil: no tracing step at all in the handler
	if s.traces, err = tracing.Start(ctx, cfg.Version, s.log); err != nil {
		return nil, &ConfigError{fmt.Errorf("tracing: %w", err)}
	} else if s.traces != nil {
		tracer = s.traces.Tracer("github.com/petstore/orderd/internal/api")
	}
	s.storeLog = &storeLog{log: s.log, now: cfg.Now, count: m.StoreFault, last: map[string]time.Time{}, held: map[string]int64{}}
	// Spans without go-redis's arguments, which name keys' hashes; SQLite's faults are logged.
	if db := s.stores.db; db != nil {
		if s.traces != nil {
			db.Trace(s.traces)
		}
		db.OnFault(s.storeLog.fault)
		db.LogReadCache(s.log)
	} else if s.traces != nil {
		if err = redisotel.InstrumentTracing(s.stores.rdb, redisotel.WithTracerProvider(s.traces), redisotel.WithDBStatement(false)); err != nil {
			return nil, err
		}
	}
	ready := func(ctx context.Context) error {
		err := s.stores.Ready(ctx)
		s.storeLog.outage(err)
		return err
	}
	_ = ready(ctx) // a Redis that does not answer yet is the start of an outage, warned of like any other
	var limiter ratelimit.Limiter = ratelimit.NewMemory(cfg.Now, cfg.Ban, ratelimit.MaxAnonymous(cfg.MaxAnonymousCallers), ratelimit.OnForget(m.ForgottenCaller))
	if rdb := s.stores.rdb; rdb != nil { // Redis's, shared by every instance, falling back as cfg says
		fallback := limiter
		if cfg.LimiterFallback != "memory" {
			fallback = nil
		}
		limiter, _ = redisstore.NewLimiter(rdb, redisstore.LimiterOptions{Prefix: cfg.Store.RedisPrefix, Timeout: cfg.Store.RedisTimeout,
			Clock: cfg.Now, Ban: cfg.Ban, Fallback: fallback, OnFallback: m.Fallback, Logger: cfg.Logger}) // its error is a bad prefix: OpenStores refused it
	}
	var begin func(context.Context) context.Context
	if s.stores.rdb != nil {
		begin = order.Begin // Redis answers keys from memory and confirms them in the decision's round trip
	}
	var metricsOnMain http.Handler
	if cfg.MetricsAddr == "" {
		metricsOnMain = m.Handler()
	}
	handler, err := api.New(api.Config{
		Observer: m, Metrics: metricsOnMain, Orders: s.stores.Orders, Events: s.stores.Events,
		MaxStreamsPerKey: cfg.MaxStreamsPerKey, StreamRecheck: cfg.StreamRecheck,
		Closing: s.closing, Draining: s.draining, PageTokens: pagetoken.For(cfg.PageTokenSecret, s.stores.Secrets), Pets: s.stores.Pets, Keys: s.stores.Keys,
		Limiter: limiter, Ready: ready, TrustedProxies: cfg.TrustedProxies, CORSAllowOrigins: cfg.CORSAllowOrigins,
		IPv6Prefix: cfg.IPv6Prefix, Sunset: cfg.Sunset, Logger: s.log, AccessLog: cfg.AccessLog, Now: cfg.Now, Tracer: tracer, Begin: begin,
	})
	if err != nil {
		return nil, err
	}
	s.srvs = []*http.Server{api.HTTPServer(handler, s.log)}
	if cfg.MetricsAddr != "" {
		mux := http.NewServeMux() // /metrics alone: a probe pointed at another path by mistake fails
		mux.Handle("GET /metrics", m.Handler())
		s.srvs = append(s.srvs, api.HTTPServer(mux, s.log))
	}
	for _, addr := range []string{cfg.Addr, cfg.MetricsAddr}[:len(s.srvs)] {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, err
		}
		s.lns = append(s.lns, ln)
	}
	return s, nil
}

// Addr is the address the API listens on: Config.Addr with the port it picked.
func (s *Service) Addr() string { return s.lns[0].Addr().String() }

// URL is http://host:port.
func (s *Service) URL() string { return "http://" + s.Addr() }

// MetricsAddr is the address of the metrics listener, or "" when /metrics is on Addr.
func (s *Service) MetricsAddr() string {
	if len(s.lns) < 2 {
		return ""
	}
	return s.lns[1].Addr().String()
}

// Run serves until ctx ends, then drains for ShutdownDelay and shuts down within ShutdownTimeout.
func (s *Service) Run(ctx context.Context) error {
	served := make(chan error, len(s.srvs))
	for i, srv := range s.srvs {
		go func() { served <- srv.Serve(s.lns[i]) }()
	}
	s.log.Info("listening", slog.String("addr", s.Addr()), slog.String("mode", map[bool]string{false: "embedded", true: "redis"}[s.stores.rdb != nil]))
	if s.MetricsAddr() != "" {
		defer s.srvs[1].Close()
		s.log.Info("metrics listening", slog.String("addr", s.MetricsAddr()))
	}
	background, stopBackground := context.WithCancel(ctx)
	go s.trimEvents(background)
	w := s.cfg.Webhooks
	w.Store, w.Events, w.Observer, w.Logger = s.stores.Webhooks, s.stores.Events, s.metrics, s.log
	host, _ := os.Hostname() // the leases' owner: a random part too, for two processes are never one
	w.Owner = fmt.Sprintf("%s/%d/%s", host, os.Getpid(), rand.Text()[:8])
	delivered := make(chan struct{})
	go func() { defer close(delivered); webhook.NewDeliverer(w).Run(background) }()
	// Before Close closes the stores: deliveries in flight are cut, the leases released for another instance.
	defer func() { stopBackground(); <-delivered }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	close(s.draining)
	if d := s.cfg.ShutdownDelay; d > 0 {
		// Balancers stop sending; each answer meanwhile closes its connection, lest a client hold it.
		s.srvs[0].SetKeepAlivesEnabled(false)
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
	if err := s.srvs[0].Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	s.log.Info("stopped")
	return nil
}

// Close closes the listeners and servers at once, then the stores.
func (s *Service) Close() error {
	for i, srv := range s.srvs {
		srv.Close()
		if i < len(s.lns) {
			s.lns[i].Close() // already closed if it was served
		}
	}
	err := s.stores.Close()
	if s.traces != nil { // the last spans are sent, within a bound
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if terr := s.traces.Shutdown(ctx); terr != nil {
			s.log.Warn("tracing: the last spans were not all sent", slog.String("error", terr.Error()))
		}
	}
	return err
}

// trimEvents applies the retention every minute; every instance does: a trim is idempotent and atomic.
func (s *Service) trimEvents(ctx context.Context) {
	if s.cfg.Retention == (order.Retention{}) {
		return
	}
	for tick := time.Tick(time.Minute); ; {
		n, err := s.stores.Events.Trim(ctx, s.cfg.Retention)
		switch {
		case ctx.Err() != nil:
			return
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
		case <-tick:
		}
	}
}

// Stores are one deployment's stores, all in Redis or all in one SQLite file (see StoreConfig).
type Stores struct {
	Orders   order.Store
	Events   order.EventLog // the log of Orders' changes, in the same storage
	Pets     order.PetStore
	Keys     order.KeyStore
	Secrets  pagetoken.SecretStore // the page-token secret, when Config.PageTokenSecret is empty
	Webhooks webhook.Store         // the endpoints Events are delivered to, and their delivery state

	Ready func(context.Context) error // whether they can do a request's work (a Redis may answer PING, not it)
	Close func() error                // closes the Redis client or the SQLite file

	rdb goredis.UniversalClient // nil in the embedded mode
	db  *sqlitestore.DB         // nil with Redis
}

// OpenStores opens the stores cfg names (not waiting for Redis); a bad setting or file is a *ConfigError.
func OpenStores(cfg StoreConfig) (*Stores, error) {
	s := &Stores{}
	if cfg.RedisURL == "" {
		db, err := sqlitestore.OpenFile(cfg.DB, cfg.CreateDB)
		if err != nil {
			return nil, &ConfigError{err}
		}
		s.db, s.Ready, s.Close, s.Orders, s.Events, s.Pets = db, db.Ready, db.Close, sqlitestore.NewOrders(db), sqlitestore.NewEvents(db), sqlitestore.NewPets(db)
		s.Keys, s.Secrets, s.Webhooks = sqlitestore.NewKeys(db), sqlitestore.NewSecrets(db), sqlitestore.NewWebhooks(db)
		return s, nil
	}
	rdb, err := redisstore.Open(cfg.RedisURL, cfg.RedisTimeout)
	if err != nil {
		return nil, &ConfigError{err}
	}
	p, t := cfg.RedisPrefix, cfg.RedisTimeout
	orders, err := redisstore.NewOrders(rdb, p, t)
	if err != nil {
		rdb.Close()
		return nil, &ConfigError{err}
	}
	// The others check the same prefix as NewOrders, which took it.
	s.rdb, s.Orders, s.Close = rdb, orders, rdb.Close
	s.Ready = func(ctx context.Context) error { return redisstore.Ready(ctx, rdb, p, t) }
	s.Pets, _ = redisstore.NewPets(rdb, p, t)
	s.Keys, _ = redisstore.NewKeys(rdb, p, t)
	s.Secrets, _ = redisstore.NewSecrets(rdb, p, t)
	s.Events, _ = redisstore.NewEvents(rdb, p, t)
	s.Webhooks, _ = redisstore.NewWebhooks(rdb, p, t)
	return s, nil
}

// Imported is what an import wrote: records added and updated in SQLite, order fields in Redis.
type Imported struct {
	sqlitestore.Imported
	OrderFieldsChanged int64
}

// ImportBatch is the records of an import's batch: its calls cost little more than its rows.
const ImportBatch = 8000

// ImportBatches adds or updates orders and pets, never an order's status (nor undoes a cancel). On
// a refused batch, Redis keeps the batches before it, SQLite none.
func (s *Stores) ImportBatches(ctx context.Context, orders order.Batches[order.Order], pets order.Batches[order.Pet]) (Imported, error) {
	if s.db != nil {
		n, err := s.db.ImportBatches(ctx, orders, pets)
		return Imported{Imported: n}, err
	}
	changed, err := s.Orders.(*redisstore.Orders).ImportBatches(ctx, orders)
	if err == nil {
		err = s.Pets.(*redisstore.Pets).ImportBatches(ctx, pets)
	}
	return Imported{OrderFieldsChanged: changed}, err
}

// storeLog logs outages and order.Faults at most once a minute per kind. Not rate.Sometimes: it
// neither counts the lines it held back, which are logged, nor takes a clock, which tests move.
type storeLog struct {
	log   *slog.Logger
	now   func() time.Time
	count func(kind string) // of faults
	mu    sync.Mutex
	last  map[string]time.Time // the last line of each kind
	held  map[string]int64     // calls of each kind since its last line
	since time.Time            // when the outage began; zero: none
}

// due reports, under l.mu, whether a line of kind is due now, and the calls it held back.
func (l *storeLog) due(kind string) (ok bool, held int64) {
	if l.now().Sub(l.last[kind]) < time.Minute {
		l.held[kind]++
		return false, 0
	}
	held = l.held[kind]
	l.last[kind], l.held[kind] = l.now(), 0
	return true, held
}

// outage takes what a readiness check met; an order.Fault was logged when the store found it.
func (l *storeLog) outage(err error) {
	if fault := (*order.Fault)(nil); err != nil && (!errors.Is(err, order.ErrUnavailable) || errors.As(err, &fault)) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	downFor := slog.String("down_for", l.now().Sub(l.since).Round(time.Second).String())
	switch {
	case err == nil && !l.since.IsZero():
		l.since = time.Time{}
		l.log.Info("store answers again", downFor)
	case err == nil:
	case l.since.IsZero():
		l.since, l.last["outage"], l.held["outage"] = l.now(), l.now(), 0
		l.log.Warn("store unavailable: answering 503 until it answers again", slog.String("error", err.Error()))
	default:
		if ok, held := l.due("outage"); ok {
			l.log.Warn("store still unavailable", slog.String("error", err.Error()), downFor, slog.Int64("failures_since_last_warning", held+1))
		}
	}
}

// fault logs f: an error when it lasts until a restart, else a warning.
func (l *storeLog) fault(f *order.Fault) {
	l.count(f.Kind)
	l.mu.Lock()
	ok, held := l.due(f.Kind)
	l.mu.Unlock()
	if !ok {
		return
	}
	level, msg := slog.LevelWarn, "store fault: "+f.Public
	if f.Lasting {
		level, msg = slog.LevelError, msg+"; not ready until it is mended and the service restarted"
	}
	l.log.LogAttrs(context.Background(), level, msg, slog.String("kind", f.Kind), slog.String("error", f.Err.Error()),
		slog.Int64("repeats_since_last_line", held))
}
