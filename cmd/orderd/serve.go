package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/pagetoken"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/service"
	"github.com/petstore/orderd/internal/webhook"
)

// parseServe turns the flags and variables of `orderd serve` into a Config and a log level:
// the one place the settings are checked.
func parseServe(args []string, getenv func(string) string, stdout io.Writer) (service.Config, slog.Level, error) {
	cfg := service.DefaultConfig()
	logLevel := slog.LevelInfo
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "address to listen on (host:port; port 0 picks a free one)")
	timeVar(fs, &cfg.Sunset.DeprecatedAt, "pets-deprecated-at", "when GET /pets/{petId} was deprecated (RFC 3339 or YYYY-MM-DD)")
	timeVar(fs, &cfg.Sunset.SunsetAt, "pets-sunset-at", "when GET /pets/{petId} stops working and answers 410 (RFC 3339 or YYYY-MM-DD)")
	fs.StringVar(&cfg.Sunset.Link, "pets-sunset-link", cfg.Sunset.Link, "migration notes, sent in the Link header of the deprecated operation")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "how long requests in flight may take to finish on SIGTERM")
	// Time for a balancer polling /readyz every second or two to see it fail twice.
	fs.DurationVar(&cfg.ShutdownDelay, "shutdown-delay", 5*time.Second, "on SIGTERM, how long /readyz answers 503 while requests are still served, before the listener closes (0: at once)")
	fs.Int64Var(&cfg.Ban.After, "ban-after", cfg.Ban.After, "the n-th request sent after a 429 and before its Retry-After passed bans the caller (0: never ban)")
	fs.DurationVar(&cfg.Ban.For, "ban-for", cfg.Ban.For, "how long a ban lasts")
	listVar(fs, &cfg.TrustedProxies, "trusted-proxies", "comma-separated CIDRs of proxies whose X-Forwarded-For names the client (none: the peer address counts)",
		func(item string) (n *net.IPNet, err error) {
			if a, err := netip.ParseAddr(item); err == nil { // a bare address is one host
				item = netip.PrefixFrom(a, a.BitLen()).String()
			}
			if _, n, err = net.ParseCIDR(item); err != nil {
				err = fmt.Errorf("%q is not a CIDR or an address", item)
			}
			return n, err
		})
	listVar(fs, &cfg.CORSAllowOrigins, "cors-allow-origins", "comma-separated origins whose pages may call the API from a browser, exactly (https://shop.example,http://localhost:3000); none: CORS off",
		func(item string) (string, error) { return item, api.CheckOrigin(item) })
	fs.IntVar(&cfg.IPv6Prefix, "ipv6-prefix", cfg.IPv6Prefix, "callers without a key on IPv6 are counted together per network of this prefix length (1 to 128)")
	fs.IntVar(&cfg.MaxAnonymousCallers, "anonymous-callers-max", cfg.MaxAnonymousCallers, "callers without a key the instance's own limiter remembers; past it the least recently seen not banned are forgotten")
	fs.StringVar(&cfg.PageTokenSecret, "page-token-secret", "", "the secret v2's page tokens are made under: at least 32 bytes; "+
		"when empty the store's secret is used, made on first use; set the same value on every instance, or leave it empty everywhere")
	fs.StringVar(&cfg.MetricsAddr, "metrics-addr", "", "serve /metrics on this address of its own (host:port); none: on --addr")
	fs.StringVar(&cfg.LimiterFallback, "limiter-fallback", cfg.LimiterFallback, "with Redis unreachable: memory (each instance limits on its own, logged) or fail (answer 503)")
	fs.DurationVar(&cfg.Retention.MaxAge, "events-retention", cfg.Retention.MaxAge, "how long the log of order events keeps an event (0: no bound by age)")
	fs.Int64Var(&cfg.Retention.MaxCount, "events-max", cfg.Retention.MaxCount, "the most events the log keeps, the newest (0: no bound by count)")
	fs.IntVar(&cfg.MaxStreamsPerKey, "max-streams-per-key", cfg.MaxStreamsPerKey, "event streams one key may hold open on this instance")
	allowPrivate := fs.Bool("webhooks-allow-private", false, "let webhooks go to private, loopback, link-local and the other non-public addresses (receivers on the operator's own network)")
	w := &cfg.Webhooks
	listVar(fs, &w.Schedule.Backoff, "webhooks-retry", "comma-separated waits before each retry of a failed webhook, the last repeating; positive, never decreasing; each up to 10% longer at random", time.ParseDuration)
	fs.DurationVar(&w.Schedule.GiveUpAfter, "webhooks-give-up", w.Schedule.GiveUpAfter, "how long after an event's first failed attempt its endpoint is marked failing")
	fs.DurationVar(&w.LeaseTTL, "webhooks-lease", w.LeaseTTL, "how long an instance's hold on a webhook endpoint lasts unrenewed: the endpoints of an instance that dies wait that long, "+
		"and up to 5s more (a third of it when shorter), for another; an attempt is cut when it would outlast it; at least 1s")
	fs.TextVar(&logLevel, "log-level", logLevel, "debug, info, warn or error")
	_, err := parseFlags(fs, &cfg.Store, args, 0, getenv, stdout)
	w.Client = webhook.NewClient(*allowPrivate)
	check := func(ok bool, format string, a ...any) {
		if !ok && err == nil {
			err = usageErrorf("serve: "+format, a...)
		}
	}
	check(checkAddr(cfg.Addr) == nil, "--addr: %w", checkAddr(cfg.Addr))
	check(cfg.MetricsAddr == "" || checkAddr(cfg.MetricsAddr) == nil, "--metrics-addr: %w", checkAddr(cfg.MetricsAddr))
	check(cfg.LimiterFallback == "memory" || cfg.LimiterFallback == "fail", "--limiter-fallback must be memory or fail, not %q", cfg.LimiterFallback)
	check(cfg.Sunset.SunsetAt.After(cfg.Sunset.DeprecatedAt), "--pets-sunset-at must be after --pets-deprecated-at")
	check(cfg.ShutdownTimeout > 0, "--shutdown-timeout must be positive")
	check(cfg.ShutdownDelay >= 0, "--shutdown-delay must be 0 or more")
	check(ratelimit.CheckIPv6Prefix(cfg.IPv6Prefix) == nil, "--ipv6-prefix must be from 1 to 128, not %d", cfg.IPv6Prefix)
	check(cfg.MaxAnonymousCallers > 0, "--anonymous-callers-max must be positive, not %d", cfg.MaxAnonymousCallers)
	check(cfg.PageTokenSecret == "" || len(cfg.PageTokenSecret) >= pagetoken.MinSecretLen,
		"--page-token-secret must have at least %d bytes, not %d", pagetoken.MinSecretLen, len(cfg.PageTokenSecret))
	check(cfg.Retention.MaxAge >= 0 && cfg.Retention.MaxCount >= 0, "--events-retention and --events-max must be 0 or more")
	check(cfg.MaxStreamsPerKey > 0, "--max-streams-per-key must be positive, not %d", cfg.MaxStreamsPerKey)
	check(w.Schedule.Check() == nil, "--webhooks-retry or --webhooks-give-up: %w", w.Schedule.Check())
	check(w.LeaseTTL >= time.Second, "--webhooks-lease must be at least 1s, not %s", w.LeaseTTL)
	check(cfg.Ban.After == 0 || cfg.Ban.After > 0 && cfg.Ban.For > 0, "--ban-after must be 0 or more, and --ban-for positive when bans are on")
	return cfg, logLevel, err
}

// timeVar defines a flag of an instant, written RFC 3339 or as a UTC date.
func timeVar(fs *flag.FlagSet, p *time.Time, name, usage string) {
	fs.Func(name, usage, func(s string) (err error) {
		if *p, err = time.Parse(time.RFC3339, s); err != nil {
			if *p, err = time.Parse(time.DateOnly, s); err != nil {
				return errors.New("want RFC 3339 (2027-07-01T00:00:00Z) or a date (2027-07-01)")
			}
		}
		return nil
	})
	fs.Lookup(name).DefValue = p.Format(time.RFC3339)
}

// listVar defines a flag of comma-separated items, each read by parse; empty ones are skipped.
func listVar[T any](fs *flag.FlagSet, p *[]T, name, usage string, parse func(string) (T, error)) {
	def := strings.Trim(strings.ReplaceAll(fmt.Sprint(*p), " ", ","), "[]")
	fs.Func(name, usage, func(s string) error {
		*p = nil
		for _, item := range strings.Split(s, ",") {
			if item = strings.TrimSpace(item); item != "" {
				v, err := parse(item)
				if err != nil {
					return err
				}
				*p = append(*p, v)
			}
		}
		return nil
	})
	fs.Lookup(name).DefValue = def
}

// checkAddr checks host:port to listen on: an empty host is every interface, port 0 a free one.
func checkAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if _, portErr := strconv.ParseUint(port, 10, 16); err != nil || portErr != nil || strings.ContainsAny(host, " /") {
		return fmt.Errorf("want host:port (127.0.0.1:8080, :8080; a port from 0 to 65535), not %q", addr)
	}
	return nil
}

// serve runs `orderd serve`: the service, until ctx ends (SIGTERM or SIGINT).
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, logLevel, err := parseServe(args, getenv, stdout)
	if err != nil {
		return err
	}
	// A live heap of a few MiB has Go's smallest goal, 4 MiB, which under load meant dozens of
	// collections a second: GOGC 400 unless the environment sets it. GOMEMLIMIT bounds a large heap.
	if getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	// ORDERD_MEMORY_LIMIT is the container's limit in bytes (Kubernetes's downward API). At 100%
	// the collector would work hard only as the kernel kills the process: a tenth is left for what Go does not count.
	if v := getenv("ORDERD_MEMORY_LIMIT"); v != "" && getenv("GOMEMLIMIT") == "" {
		limit, err := strconv.ParseInt(v, 10, 64)
		if err != nil || limit <= 0 {
			return usageErrorf("serve: ORDERD_MEMORY_LIMIT must be a number of bytes, not %q", v)
		}
		debug.SetMemoryLimit(limit / 10 * 9)
	}
	cfg.Logger = slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: logLevel}))
	cfg.AccessLog = stderr
	cfg.Version, _ = buildVersion() // for traces, which the OTEL_* environment turns on
	svc, err := service.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer svc.Close()
	return svc.Run(ctx)
}
