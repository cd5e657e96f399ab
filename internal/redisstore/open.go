// Package redisstore keeps what the service's instances share in Redis (docs/redis-layout.md);
// Open makes the one client they share from a URL.
package redisstore

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultTimeout bounds every Redis call: a Redis that does not answer never hangs a request.
const DefaultTimeout = time.Second

// replicaReads are go-redis's URL options that send reads to replicas (Cluster, Sentinel): a
// replica may lack an acknowledged write, and a version read there would serve a list before it.
var replicaReads = []string{"read_only", "route_by_latency", "route_randomly", "replica_only", "use_disconnected_replicas"}

// Open returns a client for url without connecting, so the service starts while Redis is down:
//
//	redis://[user:pass@]host:port[/db]            one node (rediss:// for TLS)
//	redis://host:port?master_name=NAME&addr=h2:p2  Sentinel: the sentinels, and the primary's name
//	redis+cluster://host:port?addr=h2:p2           Cluster: seed nodes (rediss+cluster:// for TLS)
//
// Timeouts not in the URL's query are timeout.
func Open(rawURL string, timeout time.Duration) (redis.UniversalClient, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redis URL: %w", err)
	}
	q, timeout := u.Query(), cmp.Or(max(timeout, 0), DefaultTimeout)
	if q.Has("max_retries") { // docs/redis-layout.md, "When Redis cannot be reached"
		return nil, fmt.Errorf("redis URL: max_retries is not allowed: a call that may have run is never sent again")
	}
	q.Set("max_retries", "-1")
	for _, name := range replicaReads {
		if q.Has(name) {
			return nil, fmt.Errorf("redis URL: %s is not allowed: reads go to the primary, as a replica may lack an acknowledged write", name)
		}
	}
	for _, name := range []string{"dial_timeout", "read_timeout", "write_timeout", "pool_timeout"} {
		if !q.Has(name) {
			q.Set(name, timeout.String())
		}
	}
	u.RawQuery = q.Encode()
	// ContextTimeoutEnabled: callContext's deadline bounds the socket reads too.
	switch {
	case strings.HasSuffix(u.Scheme, "+cluster"):
		u.Scheme = strings.TrimSuffix(u.Scheme, "+cluster")
		o, err := redis.ParseClusterURL(u.String())
		if err != nil {
			return nil, fmt.Errorf("redis URL: %w", err)
		}
		o.ContextTimeoutEnabled = true
		return redis.NewClusterClient(o), nil
	case q.Has("master_name"):
		o, err := redis.ParseFailoverURL(u.String())
		if err != nil {
			return nil, fmt.Errorf("redis URL: %w", err)
		}
		o.ContextTimeoutEnabled = true
		return redis.NewFailoverClient(o), nil
	case u.Scheme == "redis" || u.Scheme == "rediss":
		o, err := redis.ParseURL(u.String())
		if err != nil {
			return nil, fmt.Errorf("redis URL: %w", err)
		}
		o.ContextTimeoutEnabled = true
		return redis.NewClient(o), nil
	}
	return nil, fmt.Errorf("redis URL: scheme %q is not redis, rediss, redis+cluster or rediss+cluster", u.Scheme)
}

// CheckURL reports whether rawURL is a Redis URL that Open accepts, without connecting.
func CheckURL(rawURL string) error {
	c, err := Open(rawURL, DefaultTimeout)
	if err != nil {
		return err
	}
	return c.Close()
}

// SetLogger sends go-redis's messages and the stores' reports to log; the last call wins.
func SetLogger(log *slog.Logger) {
	storeLogger.Store(log)
	setLoggerOnce.Do(func() { redis.SetLogger(slogPrinter{}) })
}

var (
	setLoggerOnce sync.Once
	storeLogger   atomic.Pointer[slog.Logger]
	discard       = slog.New(slog.DiscardHandler)
)

func packageLogger() *slog.Logger { return cmp.Or(storeLogger.Load(), discard) }

type slogPrinter struct{}

func (slogPrinter) Printf(ctx context.Context, format string, v ...any) {
	level := slog.LevelWarn
	// Failures to connect repeat while Redis is down, an outage the service warns of itself.
	if strings.HasPrefix(format, "redis: connection pool: failed to") {
		level = slog.LevelDebug
	}
	packageLogger().Log(ctx, level, "redis client: "+fmt.Sprintf(format, v...))
}
