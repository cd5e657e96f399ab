package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/inmem"
	"github.com/petstore/orderd/internal/jsonfile"
	"github.com/petstore/orderd/internal/logbuf"
	"github.com/petstore/orderd/internal/metrics"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/redisstore"
)

// serveConfig is every setting of `orderd serve`.
type serveConfig struct {
	addr            string
	ordersFile      string
	petsFile        string
	keysFile        string
	petsDeprecated  timeFlag
	petsSunset      timeFlag
	petsSunsetLink  string
	shutdownTimeout time.Duration
	keysReload      time.Duration
	banAfter        int64
	banFor          time.Duration
	trustedProxies  cidrsFlag
	redis           redisConfig
	limiterFallback string
	metricsAddr     string
	logLevel        slog.Level
}

func parseServe(args []string, getenv func(string) string, stdout io.Writer) (serveConfig, error) {
	cfg := serveConfig{
		petsDeprecated: timeFlag(time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)),
		petsSunset:     timeFlag(time.Date(2027, 7, 1, 0, 0, 0, 0, time.UTC)),
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	fs.StringVar(&cfg.ordersFile, "orders", "", "JSON file of orders (an array of Order with status) for the embedded store")
	fs.StringVar(&cfg.petsFile, "pets", "", "JSON file of pets (an array of Pet) for the embedded store")
	fs.StringVar(&cfg.keysFile, "keys-file", "", "JSON file of API keys (hashes only), made by `orderd keys create`; required without --redis-url")
	fs.Var(&cfg.petsDeprecated, "pets-deprecated-at", "when GET /pets/{petId} was deprecated (RFC 3339 or YYYY-MM-DD)")
	fs.Var(&cfg.petsSunset, "pets-sunset-at", "when GET /pets/{petId} stops working and answers 410 (RFC 3339 or YYYY-MM-DD)")
	fs.StringVar(&cfg.petsSunsetLink, "pets-sunset-link", "https://docs.petstore.example/orders/migrate-from-pets", "migration notes, sent in the Link header of the deprecated operation")
	fs.DurationVar(&cfg.shutdownTimeout, "shutdown-timeout", 15*time.Second, "how long requests in flight may take to finish on SIGTERM")
	fs.DurationVar(&cfg.keysReload, "keys-reload", time.Second, "how often the keys file is checked for changes")
	fs.Int64Var(&cfg.banAfter, "ban-after", ratelimit.DefaultBanPolicy.After, "the n-th request sent after a 429 and before its Retry-After passed bans the caller (0: never ban)")
	fs.DurationVar(&cfg.banFor, "ban-for", ratelimit.DefaultBanPolicy.For, "how long a ban lasts")
	fs.Var(&cfg.trustedProxies, "trusted-proxies", "comma-separated CIDRs of proxies whose X-Forwarded-For names the client (none: the peer address counts)")
	cfg.redis.register(fs)
	fs.DurationVar(&cfg.redis.ordersPoll, "redis-orders-poll", 100*time.Millisecond, "how often the orders' version is polled; a change made elsewhere is listed within it")
	fs.DurationVar(&cfg.redis.keysPoll, "redis-keys-poll", 250*time.Millisecond, "how often the keys' version is polled; a key revoked elsewhere stops within it")
	fs.StringVar(&cfg.metricsAddr, "metrics-addr", "", "serve /metrics on this address of its own (host:port); none: on --addr")
	fs.StringVar(&cfg.limiterFallback, "limiter-fallback", "memory", "with Redis unreachable: memory (each instance limits on its own, logged) or fail (answer 503)")
	fs.TextVar(&cfg.logLevel, "log-level", slog.LevelInfo, "debug, info, warn or error")
	fs.Usage = flagUsage(fs, "orderd serve [flags]")
	rest, err := parseFlags(fs, args, getenv, stdout)
	if err != nil {
		return cfg, err
	}
	switch {
	case len(rest) > 0:
		return cfg, usageErrorf("serve: unexpected argument %q", rest[0])
	case cfg.redis.url != "" && (cfg.keysFile != "" || cfg.ordersFile != "" || cfg.petsFile != ""):
		return cfg, usageErrorf("serve: with --redis-url, orders, pets and keys are in Redis: load files with orderd import, keys with orderd keys create --redis-url")
	case cfg.limiterFallback != "memory" && cfg.limiterFallback != "fail":
		return cfg, usageErrorf("serve: --limiter-fallback must be memory or fail, not %q", cfg.limiterFallback)
	case !cfg.petsSunset.t().After(cfg.petsDeprecated.t()):
		return cfg, usageErrorf("serve: --pets-sunset-at must be after --pets-deprecated-at")
	case cfg.shutdownTimeout <= 0 || cfg.keysReload <= 0 || cfg.redis.ordersPoll <= 0 || cfg.redis.keysPoll <= 0:
		return cfg, usageErrorf("serve: --shutdown-timeout, --keys-reload and the poll intervals must be positive")
	case cfg.banAfter < 0 || (cfg.banAfter > 0 && cfg.banFor <= 0):
		return cfg, usageErrorf("serve: --ban-after must be 0 or more, and --ban-for positive when bans are on")
	}
	return cfg, nil
}

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseServe(args, getenv, stdout)
	if err != nil {
		return err
	}
	// Buffered: a write system call per access line would cost more than the line. Lines
	// reach stderr within 200ms, and all of them at shutdown.
	logOut := logbuf.New(stderr, 200*time.Millisecond)
	defer logOut.Close()
	log := slog.New(slog.NewJSONHandler(logOut, &slog.HandlerOptions{Level: cfg.logLevel}))
	redisstore.SetLogger(log)

	m := metrics.New()
	b, err := openBackend(ctx, cfg, log, m)
	if err != nil {
		return err
	}
	defer b.close()
	var metricsOnMain http.Handler
	if cfg.metricsAddr == "" {
		metricsOnMain = m.Handler()
	}
	handler, err := api.New(api.Config{
		Observer:       m,
		Metrics:        metricsOnMain,
		Orders:         b.orders,
		Pets:           b.pets,
		Keys:           b.keys,
		Limiter:        b.limiter,
		Ready:          b.ready,
		TrustedProxies: cfg.trustedProxies,
		Sunset:         api.Sunset{DeprecatedAt: cfg.petsDeprecated.t(), SunsetAt: cfg.petsSunset.t(), Link: cfg.petsSunsetLink},
		Logger:         log,
	})
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler: handler,
		// A slow or huge client must not hold a connection or memory for long.
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}

	bgCtx, stopBackground := context.WithCancel(ctx)
	defer stopBackground()
	go b.run(bgCtx)

	served := make(chan error, 2)
	go func() { served <- srv.Serve(ln) }()
	log.Info("listening", slog.String("addr", ln.Addr().String()), slog.String("mode", b.mode))
	if cfg.metricsAddr != "" {
		mln, err := net.Listen("tcp", cfg.metricsAddr)
		if err != nil {
			srv.Close()
			return err
		}
		metricsSrv := &http.Server{Handler: m.Handler(), ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 30 * time.Second}
		go func() { served <- metricsSrv.Serve(mln) }()
		defer metricsSrv.Close()
		log.Info("metrics listening", slog.String("addr", mln.Addr().String()))
	}

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", slog.String("timeout", cfg.shutdownTimeout.String()))
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

var (
	orderValidate = order.Order.Validate
	orderID       = func(o order.Order) (string, int64) { return "order", o.ID }
	petValidate   = order.Pet.Validate
	petID         = func(p order.Pet) (string, int64) { return "pet", p.ID }
)

func loadOrders(path string) (*inmem.Orders, error) {
	list, err := readRecords(path, orderValidate, orderID)
	if err != nil {
		return nil, err
	}
	return inmem.NewOrders(list)
}

func loadPets(path string) (*inmem.Pets, error) {
	list, err := readRecords(path, petValidate, petID)
	if err != nil {
		return nil, err
	}
	return inmem.NewPets(list)
}

// readRecords reads a data file of records, each valid and with an id of its own, so that
// a bad record is reported with its place in the file. No path means no records.
func readRecords[T any](path string, validate func(T) error, id func(T) (string, int64)) ([]T, error) {
	if path == "" {
		return nil, nil
	}
	seen := map[int64]bool{}
	return jsonfile.ReadArray(path, func(r T) error {
		if err := validate(r); err != nil {
			return err
		}
		kind, n := id(r)
		if seen[n] {
			return fmt.Errorf("%s %d: duplicate id", kind, n)
		}
		seen[n] = true
		return nil
	})
}

// timeFlag is a flag.Value for an instant, written RFC 3339 or as a UTC date.
type timeFlag time.Time

func (f *timeFlag) t() time.Time { return time.Time(*f) }

func (f *timeFlag) String() string {
	if f == nil {
		return ""
	}
	return f.t().UTC().Format(time.RFC3339)
}

func (f *timeFlag) Set(s string) error {
	for _, layout := range []string{time.RFC3339, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			*f = timeFlag(t)
			return nil
		}
	}
	return fmt.Errorf("want RFC 3339 (2027-07-01T00:00:00Z) or a date (2027-07-01)")
}

// cidrsFlag is a flag.Value for a comma-separated list of CIDRs; a bare address is one host.
type cidrsFlag []*net.IPNet

func (f *cidrsFlag) String() string {
	if f == nil {
		return ""
	}
	parts := make([]string, len(*f))
	for i, n := range *f {
		parts[i] = n.String()
	}
	return strings.Join(parts, ",")
}

func (f *cidrsFlag) Set(s string) error {
	var out cidrsFlag
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "/") {
			if ip := net.ParseIP(part); ip != nil && ip.To4() != nil {
				part += "/32"
			} else {
				part += "/128"
			}
		}
		_, n, err := net.ParseCIDR(part)
		if err != nil {
			return fmt.Errorf("%q is not a CIDR or an address", part)
		}
		out = append(out, n)
	}
	*f = out
	return nil
}
