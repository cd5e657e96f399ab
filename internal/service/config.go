// Package service wires the Store Order Service together, a Config in, a running service out:
// on Redis when the Config names one, else on one SQLite file with in-process rate limits.
// It is the one place that picks implementations.
package service

import (
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/webhook"
)

// Config is everything a running service is made from: start from DefaultConfig. Its maker
// (`orderd serve`'s flags) checks the settings; Open takes them as they are.
type Config struct {
	Version          string              // the build's, for traces' service.version
	Addr             string              // host:port to listen on; port 0 picks a free one
	MetricsAddr      string              // when set, /metrics is served there instead of on Addr
	Store            StoreConfig         // where orders, pets and keys are kept
	Ban              ratelimit.BanPolicy // when a caller sending too early is banned, how long
	LimiterFallback  Fallback            // what the limiter does while Redis cannot be reached
	TrustedProxies   []*net.IPNet        // the peers whose X-Forwarded-For names the client
	CORSAllowOrigins []string            // the origins whose pages may call the API; none: CORS off
	IPv6Prefix       int                 // groups callers without a key on IPv6, by network
	// MaxAnonymousCallers caps the callers without a key the in-process limiter remembers.
	MaxAnonymousCallers int
	PageTokenSecret     string // signs v2's page tokens; empty: the store's secret, made on first use
	Events              EventsConfig
	Webhooks            WebhooksConfig
	Sunset              api.Sunset    // the schedule of the deprecated pets operation
	ShutdownTimeout     time.Duration // how long requests in flight may take once Run's ctx ends
	// ShutdownDelay is how long Run keeps serving, /readyz answering 503, once its ctx ends,
	// so that load balancers stop sending before the listener closes; 0: it closes at once.
	ShutdownDelay time.Duration
	Logger        *slog.Logger // receives the service's JSON lines; none when nil
	AccessLog     io.Writer    // receives the access lines, JSON too, while Logger is at INFO; none when nil
	// Now is the clock of the limiter, of the sunset and of the requests' durations (time.Now
	// when nil): tests move it.
	Now func() time.Time
}

// EventsConfig bounds the log of order events and its streams.
type EventsConfig struct {
	Retention        order.Retention // events older, or past the newest count, are dropped; 0: no bound
	MaxStreamsPerKey int             // the streams one key holds open on an instance
	// StreamRecheck is how often an open stream checks that its key is neither revoked nor
	// banned (api.DefaultStreamRecheck when 0): no flag sets it.
	StreamRecheck time.Duration
}

// WebhooksConfig is how this instance delivers webhooks: webhook.Config's settings (zero:
// its defaults), and whether deliveries may go to addresses that are not public
// (webhook.Public), for receivers on the operator's own network, and tests.
type WebhooksConfig struct {
	AllowPrivate   bool
	Poll, LeaseTTL time.Duration // no flag sets Poll: it follows LeaseTTL
	Schedule       webhook.Schedule
}

// StoreConfig says where a deployment keeps its orders, pets and keys: all in Redis when
// RedisURL is set; otherwise all in the SQLite file DB.
type StoreConfig struct {
	RedisURL     string
	RedisPrefix  string        // starts every Redis key, so that deployments can share a Redis
	RedisTimeout time.Duration // bound on each Redis call
	DB           string        // the embedded mode's SQLite file
	// CreateDB makes a missing DB; otherwise a mistyped path is an error, not an empty store.
	CreateDB bool
}

// Redis reports whether the deployment keeps everything in Redis.
func (c StoreConfig) Redis() bool { return c.RedisURL != "" }

// Fallback is what the limiter does while Redis cannot be reached.
type Fallback string

const (
	// FallbackMemory lets each instance limit on its own, logged and counted, until Redis answers.
	FallbackMemory Fallback = "memory"
	// FallbackFail answers 503 to every request the limiter cannot decide.
	FallbackFail Fallback = "fail"
)

// DefaultConfig is the configuration of `orderd serve` without flags, but for ShutdownDelay,
// 0 here so that tests stop at once.
func DefaultConfig() Config {
	return Config{
		Addr:                "127.0.0.1:8080",
		Ban:                 ratelimit.DefaultBanPolicy,
		LimiterFallback:     FallbackMemory,
		IPv6Prefix:          ratelimit.DefaultIPv6Prefix,
		MaxAnonymousCallers: ratelimit.DefaultMaxAnonymous,
		Sunset: api.Sunset{
			DeprecatedAt: time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC),
			SunsetAt:     time.Date(2027, 7, 1, 0, 0, 0, 0, time.UTC),
			Link:         "https://docs.petstore.example/orders/migrate-from-pets",
		},
		ShutdownTimeout: 15 * time.Second,
		Events: EventsConfig{
			Retention:        order.Retention{MaxAge: 7 * 24 * time.Hour, MaxCount: 1_000_000},
			MaxStreamsPerKey: api.DefaultMaxStreamsPerKey,
		},
		Webhooks: WebhooksConfig{LeaseTTL: webhook.DefaultLeaseTTL, Schedule: webhook.DefaultSchedule},
		Store:    StoreConfig{RedisPrefix: redisstore.DefaultPrefix, RedisTimeout: redisstore.DefaultTimeout, DB: "orderd.db"},
	}
}

// ConfigError is a setting or a data file the service cannot start with: retrying cannot help.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

func configError(err error) error {
	if err == nil {
		return nil
	}
	return &ConfigError{err}
}
