// Package redisstore keeps everything the instances of the service share in Redis: orders,
// pets and API keys (the stores of packages order and auth), the rate-limit counters and
// bans (a ratelimit.Limiter), and the page-token secret. docs/redis-layout.md describes the keys for the systems that
// write orders in; names.go is where the code names them. Open makes the one client they
// share from a URL: a single node, a Sentinel-watched primary, or a Cluster.
package redisstore

import (
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

// DefaultTimeout bounds every Redis call, so that a Redis that does not answer costs a
// request a second, never a hung request.
const DefaultTimeout = time.Second

// Open returns a client for url without connecting (go-redis connects on first use, so the
// service starts while Redis is down). The forms:
//
//	redis://[user:pass@]host:port[/db]            one node (rediss:// for TLS)
//	redis://host:port?master_name=NAME&addr=h2:p2  Sentinel: the sentinels, and the primary's name
//	redis+cluster://host:port?addr=h2:p2           Cluster: seed nodes (rediss+cluster:// for TLS)
//
// Timeouts not set in the URL's query default to timeout.
func Open(rawURL string, timeout time.Duration) (redis.UniversalClient, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redis URL: %w", err)
	}
	q := u.Query()
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	// defaults gives each of the four timeouts the default, unless the URL's query set it,
	// and makes the deadline of each call's context bound its socket reads and writes.
	//
	// Every call runs under callContext: the request's context bounded by timeout. Without
	// ContextTimeoutEnabled, go-redis bounds a read by ReadTimeout alone, whatever the
	// context says; so a URL's read_timeout longer than timeout, or a request with a shorter
	// deadline of its own, would hold a pooled connection (and the request) past the bound
	// the stores and classify rely on. With it, the earlier of ReadTimeout and the context's
	// deadline applies. (go-redis v9 reads only the deadline, not a cancellation: a client
	// that hangs up still holds its connection until Redis answers or the bound passes,
	// which the bound keeps short.)
	//
	// And no call is sent twice. A command whose connection breaks after it was written may
	// have run; go-redis would send it again (MaxRetries), and a write run twice answers
	// wrongly: rate.lua counts its caller again, an added key answers that its name is
	// taken, a cancel that the order was already cancelled. With MaxRetries -1 the call
	// fails as an outage, which the stores and the limiter handle as every other failure to
	// reach Redis (a 503, or the limiter's fallback). Nothing relies on the retries: go-redis
	// checks a pooled connection before using it, so what is lost is the retry of a failed
	// dial or of a READONLY just after a failover, each one request's 503. So a URL may not
	// set max_retries. The writes refuse to be resent themselves too (once.go), which a
	// Cluster client needs: it also resends on its redirect loop (max_redirects), which
	// MOVED and ASK need.
	if q.Has("max_retries") {
		return nil, fmt.Errorf("redis URL: max_retries is not allowed: a call that may have run is never sent again")
	}
	defaults := func(dial, read, write, pool *time.Duration, contextTimeout *bool, maxRetries *int) {
		for name, d := range map[string]*time.Duration{"dial_timeout": dial, "read_timeout": read, "write_timeout": write, "pool_timeout": pool} {
			if !q.Has(name) {
				*d = timeout
			}
		}
		*contextTimeout = true
		*maxRetries = -1
	}
	switch {
	case strings.HasSuffix(u.Scheme, "+cluster"):
		u.Scheme = strings.TrimSuffix(u.Scheme, "+cluster")
		o, err := redis.ParseClusterURL(u.String())
		if err != nil {
			return nil, fmt.Errorf("redis URL: %w", err)
		}
		defaults(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout, &o.ContextTimeoutEnabled, &o.MaxRetries)
		return redis.NewClusterClient(o), nil
	case q.Has("master_name"):
		o, err := redis.ParseFailoverURL(rawURL)
		if err != nil {
			return nil, fmt.Errorf("redis URL: %w", err)
		}
		defaults(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout, &o.ContextTimeoutEnabled, &o.MaxRetries)
		return redis.NewFailoverClient(o), nil
	case u.Scheme == "redis" || u.Scheme == "rediss":
		o, err := redis.ParseURL(rawURL)
		if err != nil {
			return nil, fmt.Errorf("redis URL: %w", err)
		}
		defaults(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout, &o.ContextTimeoutEnabled, &o.MaxRetries)
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

// SetLogger sends go-redis's own messages to log, so that every line the service writes is
// JSON, and none reaches a command's standard error as go-redis's own text: the keys and
// import commands give a logger that discards. The connection pool's failures to dial or to
// get a connection are logged at debug: they repeat several times a second while Redis is
// down, and the outage itself is what the service warns of (the limiter, the readiness
// check). go-redis's other messages are warnings. The last call wins; go-redis's logger is
// set once per process, since its goroutines read it without a lock.
// It is also where the stores report records they cannot serve (Orders.LogTo overrides it).
func SetLogger(log *slog.Logger) {
	storeLogger.Store(log)
	setLoggerOnce.Do(func() { redis.SetLogger(slogPrinter{}) })
}

var (
	setLoggerOnce sync.Once
	storeLogger   atomic.Pointer[slog.Logger]
)

// packageLogger is the logger given to SetLogger, or one that discards.
func packageLogger() *slog.Logger {
	if l := storeLogger.Load(); l != nil {
		return l
	}
	return slog.New(slog.DiscardHandler)
}

// slogPrinter is go-redis's logger: it writes to the logger SetLogger was last given.
type slogPrinter struct{}

func (slogPrinter) Printf(ctx context.Context, format string, v ...any) {
	level := slog.LevelWarn
	if strings.HasPrefix(format, "redis: connection pool: failed to") {
		level = slog.LevelDebug
	}
	packageLogger().Log(ctx, level, "redis client: "+fmt.Sprintf(format, v...))
}
