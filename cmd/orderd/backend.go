package main

import (
	"context"
	"flag"
	"log/slog"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/inmem"
	"github.com/petstore/orderd/internal/keyfile"
	"github.com/petstore/orderd/internal/metrics"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/redisstore"
)

// redisConfig is the Redis settings that serve, keys and import share.
type redisConfig struct {
	url        string
	prefix     string
	timeout    time.Duration
	ordersPoll time.Duration
	keysPoll   time.Duration
}

func (c *redisConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.url, "redis-url", "", "Redis to share orders, keys, counters and bans through: redis://, rediss://, redis+cluster://, or ?master_name= for Sentinel (none: embedded mode)")
	fs.StringVar(&c.prefix, "redis-prefix", redisstore.DefaultPrefix, "start of every Redis key, so that deployments can share a Redis")
	fs.DurationVar(&c.timeout, "redis-timeout", redisstore.DefaultTimeout, "bound on each Redis call")
}

// connect opens Redis and, when mustAnswer, fails unless it answers now: the keys and import
// commands cannot do their work later, while serve starts anyway and waits for it.
func (c *redisConfig) connect(ctx context.Context, mustAnswer bool) (goredis.UniversalClient, error) {
	rdb, err := redisstore.Open(c.url, c.timeout)
	if err != nil {
		return nil, usageError{err}
	}
	if mustAnswer {
		if err := redisstore.Ping(ctx, rdb, c.timeout); err != nil {
			rdb.Close()
			return nil, usageErrorf("redis does not answer at the given --redis-url: %v", err)
		}
	}
	return rdb, nil
}

// backend is the stores and the limiter serve runs on, in one mode or the other.
type backend struct {
	mode    string
	orders  order.Store
	pets    order.PetStore
	keys    auth.KeyStore
	limiter ratelimit.Limiter
	ready   func(context.Context) error
	run     func(context.Context) // background work until the context ends
	close   func() error
}

// openBackend is the one place that picks implementations: Redis with --redis-url, the
// process's memory and files without.
func openBackend(ctx context.Context, cfg serveConfig, log *slog.Logger, m *metrics.Metrics) (*backend, error) {
	ban := ratelimit.BanPolicy{After: cfg.banAfter, For: cfg.banFor}
	if cfg.redis.url == "" {
		return openEmbedded(cfg, ban, log)
	}
	rdb, err := cfg.redis.connect(ctx, false)
	if err != nil {
		return nil, err
	}
	if err := redisstore.Ping(ctx, rdb, cfg.redis.timeout); err != nil {
		log.Warn("redis does not answer yet; serving 503 until it does", slog.String("error", err.Error()))
	}
	b := &backend{mode: "redis", ready: func(ctx context.Context) error { return rdb.Ping(ctx).Err() }, close: rdb.Close}
	p, t := cfg.redis.prefix, cfg.redis.timeout
	orders, err := redisstore.NewOrders(rdb, p, t)
	if err != nil {
		return nil, usageError{err}
	}
	if b.pets, err = redisstore.NewPets(rdb, p, t); err != nil {
		return nil, usageError{err}
	}
	keys, err := redisstore.NewKeys(rdb, p, t)
	if err != nil {
		return nil, usageError{err}
	}
	b.orders, b.keys = orders, keys
	// Polling the version counters saves every request the round trips that would read them:
	// see docs/redis-layout.md, "What each instance keeps".
	b.run = func(ctx context.Context) {
		go orders.Watch(ctx, cfg.redis.ordersPoll)
		keys.Watch(ctx, cfg.redis.keysPoll)
	}
	var fallback ratelimit.Limiter
	if cfg.limiterFallback == "memory" {
		fallback = inmem.NewLimiter(nil, ban)
	}
	if b.limiter, err = redisstore.NewLimiter(rdb, redisstore.LimiterOptions{
		Prefix: p, Timeout: t, Ban: ban, Fallback: fallback, OnFallback: m.Fallback, Logger: log,
	}); err != nil {
		return nil, usageError{err}
	}
	return b, nil
}

func openEmbedded(cfg serveConfig, ban ratelimit.BanPolicy, log *slog.Logger) (*backend, error) {
	if cfg.keysFile == "" {
		return nil, usageErrorf("serve: --keys-file is required without --redis-url (make one with: orderd keys create --plan free --keys-file FILE)")
	}
	orders, err := loadOrders(cfg.ordersFile)
	if err != nil {
		return nil, usageError{err}
	}
	pets, err := loadPets(cfg.petsFile)
	if err != nil {
		return nil, usageError{err}
	}
	keys, err := keyfile.Open(cfg.keysFile, false)
	if err != nil {
		return nil, usageErrorf("keys file: %w", err)
	}
	return &backend{
		mode:    "embedded",
		orders:  orders,
		pets:    pets,
		keys:    keys,
		limiter: inmem.NewLimiter(nil, ban),
		run: func(ctx context.Context) {
			keys.Watch(ctx, cfg.keysReload, func(err error) {
				if err != nil {
					log.Error("keys file not reloaded; the keys loaded before stay in use", slog.String("error", err.Error()))
					return
				}
				log.Info("keys file reloaded")
			})
		},
		close: func() error { return nil },
	}, nil
}

// keyStore opens the key store that the keys command names: a file or Redis.
func keyStore(ctx context.Context, keysFile string, rc redisConfig, create bool) (auth.KeyStore, func() error, error) {
	switch {
	case keysFile != "" && rc.url != "":
		return nil, nil, usageErrorf("keys: give --keys-file or --redis-url, not both")
	case keysFile != "":
		s, err := keyfile.Open(keysFile, create)
		if err != nil {
			return nil, nil, usageErrorf("keys file: %w", err)
		}
		return s, func() error { return nil }, nil
	case rc.url != "":
		rdb, err := rc.connect(ctx, true)
		if err != nil {
			return nil, nil, err
		}
		s, err := redisstore.NewKeys(rdb, rc.prefix, rc.timeout)
		if err != nil {
			rdb.Close()
			return nil, nil, usageError{err}
		}
		return s, rdb.Close, nil
	}
	return nil, nil, usageErrorf("keys: --keys-file or --redis-url is required")
}
