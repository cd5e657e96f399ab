package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/petstore/orderd/internal/logbuf"
	"github.com/petstore/orderd/internal/pagetoken"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/service"
)

// parseServe turns the flags and variables of `orderd serve` into a Config and a log level.
func parseServe(args []string, getenv func(string) string, stdout io.Writer) (service.Config, slog.Level, error) {
	cfg := service.DefaultConfig()
	logLevel := slog.LevelInfo
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "address to listen on (host:port; port 0 picks a free one)")
	registerStore(fs, &cfg.Store)
	fs.Var((*timeFlag)(&cfg.Sunset.DeprecatedAt), "pets-deprecated-at", "when GET /pets/{petId} was deprecated (RFC 3339 or YYYY-MM-DD)")
	fs.Var((*timeFlag)(&cfg.Sunset.SunsetAt), "pets-sunset-at", "when GET /pets/{petId} stops working and answers 410 (RFC 3339 or YYYY-MM-DD)")
	fs.StringVar(&cfg.Sunset.Link, "pets-sunset-link", cfg.Sunset.Link, "migration notes, sent in the Link header of the deprecated operation")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "how long requests in flight may take to finish on SIGTERM")
	// Time for a balancer polling /readyz every second or two to see it fail twice.
	fs.DurationVar(&cfg.ShutdownDelay, "shutdown-delay", 5*time.Second,
		"on SIGTERM, how long /readyz answers 503 while requests are still served, before the listener closes (0: at once)")
	fs.Int64Var(&cfg.Ban.After, "ban-after", cfg.Ban.After, "the n-th request sent after a 429 and before its Retry-After passed bans the caller (0: never ban)")
	fs.DurationVar(&cfg.Ban.For, "ban-for", cfg.Ban.For, "how long a ban lasts")
	fs.Var(cidrsFlag(&cfg.TrustedProxies), "trusted-proxies", "comma-separated CIDRs of proxies whose X-Forwarded-For names the client (none: the peer address counts)")
	fs.Var(originsFlag(&cfg.CORSAllowOrigins), "cors-allow-origins", "comma-separated origins whose pages may call the API from a browser, exactly (https://shop.example,http://localhost:3000); none: CORS off")
	fs.IntVar(&cfg.IPv6Prefix, "ipv6-prefix", cfg.IPv6Prefix, "callers without a key on IPv6 are counted together per network of this prefix length (1 to 128)")
	fs.IntVar(&cfg.MaxAnonymousCallers, "anonymous-callers-max", cfg.MaxAnonymousCallers, "callers without a key the instance's own limiter remembers; past it the least recently seen not banned are forgotten")
	fs.StringVar(&cfg.PageTokenSecret, "page-token-secret", "", "the secret v2's page tokens are made under: at least 32 bytes; "+
		"when empty the store's secret is used, made on first use; set the same value on every instance, or leave it empty everywhere")
	fs.StringVar(&cfg.MetricsAddr, "metrics-addr", "", "serve /metrics on this address of its own (host:port); none: on --addr")
	fs.StringVar((*string)(&cfg.LimiterFallback), "limiter-fallback", string(cfg.LimiterFallback), "with Redis unreachable: memory (each instance limits on its own, logged) or fail (answer 503)")
	fs.DurationVar(&cfg.Events.Retention.MaxAge, "events-retention", cfg.Events.Retention.MaxAge, "how long the log of order events keeps an event (0: no bound by age)")
	fs.Int64Var(&cfg.Events.Retention.MaxCount, "events-max", cfg.Events.Retention.MaxCount, "the most events the log keeps, the newest (0: no bound by count)")
	fs.IntVar(&cfg.Events.MaxStreamsPerKey, "max-streams-per-key", cfg.Events.MaxStreamsPerKey, "event streams one key may hold open on this instance")
	fs.BoolVar(&cfg.Webhooks.AllowPrivate, "webhooks-allow-private", false, "let webhooks go to private, loopback, link-local and the other non-public addresses (receivers on the operator's own network)")
	fs.Var(durationsFlag(&cfg.Webhooks.Schedule.Backoff), "webhooks-retry", "comma-separated waits before each retry of a failed webhook, the last repeating; "+
		"positive, never decreasing; each up to 10% longer at random")
	fs.DurationVar(&cfg.Webhooks.Schedule.GiveUpAfter, "webhooks-give-up", cfg.Webhooks.Schedule.GiveUpAfter, "how long after an event's first failed attempt its endpoint is marked failing")
	fs.DurationVar(&cfg.Webhooks.LeaseTTL, "webhooks-lease", cfg.Webhooks.LeaseTTL, "how long an instance's hold on a webhook endpoint lasts unrenewed: the endpoints of an instance that dies wait that long, "+
		"and up to 5s more (a third of it when shorter), for another; an attempt is cut when it would outlast it; at least 1s")
	fs.TextVar(&logLevel, "log-level", logLevel, "debug, info, warn or error")
	fs.Usage = flagUsage(fs, "orderd serve [flags]")
	rest, err := parseFlags(fs, args, getenv, stdout)
	if err != nil {
		return cfg, logLevel, err
	}
	if err := checkStoreFlags(fs.Name(), cfg.Store); err != nil {
		return cfg, logLevel, err
	}
	switch {
	case len(rest) > 0:
		return cfg, logLevel, usageErrorf("serve: unexpected argument %q", rest[0])
	case checkAddr(cfg.Addr) != nil:
		return cfg, logLevel, usageErrorf("serve: --addr: %w", checkAddr(cfg.Addr))
	case cfg.MetricsAddr != "" && checkAddr(cfg.MetricsAddr) != nil:
		return cfg, logLevel, usageErrorf("serve: --metrics-addr: %w", checkAddr(cfg.MetricsAddr))
	case cfg.LimiterFallback != service.FallbackMemory && cfg.LimiterFallback != service.FallbackFail:
		return cfg, logLevel, usageErrorf("serve: --limiter-fallback must be memory or fail, not %q", cfg.LimiterFallback)
	case !cfg.Sunset.SunsetAt.After(cfg.Sunset.DeprecatedAt):
		return cfg, logLevel, usageErrorf("serve: --pets-sunset-at must be after --pets-deprecated-at")
	case cfg.ShutdownTimeout <= 0:
		return cfg, logLevel, usageErrorf("serve: --shutdown-timeout must be positive")
	case cfg.ShutdownDelay < 0:
		return cfg, logLevel, usageErrorf("serve: --shutdown-delay must be 0 or more")
	case ratelimit.CheckIPv6Prefix(cfg.IPv6Prefix) != nil:
		return cfg, logLevel, usageErrorf("serve: --ipv6-prefix must be from 1 to 128, not %d", cfg.IPv6Prefix)
	case cfg.MaxAnonymousCallers <= 0:
		return cfg, logLevel, usageErrorf("serve: --anonymous-callers-max must be positive, not %d", cfg.MaxAnonymousCallers)
	case cfg.PageTokenSecret != "" && len(cfg.PageTokenSecret) < pagetoken.MinSecretLen:
		return cfg, logLevel, usageErrorf("serve: --page-token-secret must have at least %d bytes, not %d", pagetoken.MinSecretLen, len(cfg.PageTokenSecret))
	case cfg.Events.Retention.MaxAge < 0 || cfg.Events.Retention.MaxCount < 0:
		return cfg, logLevel, usageErrorf("serve: --events-retention and --events-max must be 0 or more")
	case cfg.Events.MaxStreamsPerKey <= 0:
		return cfg, logLevel, usageErrorf("serve: --max-streams-per-key must be positive, not %d", cfg.Events.MaxStreamsPerKey)
	case cfg.Webhooks.Schedule.Check() != nil:
		return cfg, logLevel, usageErrorf("serve: --webhooks-retry or --webhooks-give-up: %w", cfg.Webhooks.Schedule.Check())
	case cfg.Webhooks.LeaseTTL < time.Second:
		return cfg, logLevel, usageErrorf("serve: --webhooks-lease must be at least 1s, not %s", cfg.Webhooks.LeaseTTL)
	case cfg.Ban.After < 0 || (cfg.Ban.After > 0 && cfg.Ban.For <= 0):
		return cfg, logLevel, usageErrorf("serve: --ban-after must be 0 or more, and --ban-for positive when bans are on")
	}
	return cfg, logLevel, nil
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
	if err := setMemoryLimit(getenv); err != nil {
		return err
	}
	logOut := logbuf.New(stderr, 200*time.Millisecond)
	defer logOut.Close()
	cfg.Logger = slog.New(slog.NewJSONHandler(logOut, &slog.HandlerOptions{Level: logLevel}))
	cfg.AccessLog = logOut

	cfg.Version = buildVersion() // for traces, which the OTEL_* environment turns on
	svc, err := service.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer svc.Close()
	return svc.Run(ctx)
}

// memoryLimitEnv is the container's memory limit in bytes, as Kubernetes's downward API gives
// it (resourceFieldRef limits.memory). A variable of the process, as GOGC and GOMEMLIMIT are,
// and no flag: it describes where the process runs, not what the service does.
const memoryLimitEnv = "ORDERD_MEMORY_LIMIT"

// setMemoryLimit sets Go's soft memory limit to nine tenths of ORDERD_MEMORY_LIMIT, unless it
// is unset or GOMEMLIMIT is set. GOMEMLIMIT cannot say "90% of the limit" itself, and at 100%
// the collector would only work hard once the kernel is about to kill the process: the tenth
// left is for what Go does not count (the binary's pages, the kernel's socket buffers).
func setMemoryLimit(getenv func(string) string) error {
	v := getenv(memoryLimitEnv)
	if v == "" || getenv("GOMEMLIMIT") != "" {
		return nil
	}
	limit, err := strconv.ParseInt(v, 10, 64)
	if err != nil || limit <= 0 {
		return usageErrorf("serve: %s must be a number of bytes, not %q", memoryLimitEnv, v)
	}
	debug.SetMemoryLimit(limit / 10 * 9)
	return nil
}
