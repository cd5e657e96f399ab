package main

import (
	"context"
	"flag"
	"log/slog"

	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/service"
)

// registerStore adds the store flags that serve, keys and import share.
func registerStore(fs *flag.FlagSet, sc *service.StoreConfig) {
	def := service.DefaultConfig().Store
	fs.StringVar(&sc.DB, "db", def.DB, "SQLite file of orders, pets and keys (the embedded mode; unused with --redis-url)")
	fs.StringVar(&sc.RedisURL, "redis-url", "", "Redis to share orders, keys, counters and bans through: redis://, rediss://, redis+cluster://, or ?master_name= for Sentinel (none: embedded mode)")
	fs.StringVar(&sc.RedisPrefix, "redis-prefix", def.RedisPrefix, "start of every Redis key, so that deployments can share a Redis")
	fs.DurationVar(&sc.RedisTimeout, "redis-timeout", def.RedisTimeout, "bound on each Redis call")
}

// openStores opens the stores for keys and import, which, unlike serve, need Redis to answer now.
func openStores(ctx context.Context, sc service.StoreConfig) (*service.Stores, error) {
	// A failure is the command's one line on stderr; go-redis's own lines would repeat it.
	redisstore.SetLogger(slog.New(slog.DiscardHandler))
	stores, err := service.OpenStores(sc)
	if err != nil {
		return nil, err
	}
	if sc.Redis() {
		if err := stores.Ready(ctx); err != nil {
			stores.Close()
			return nil, usageErrorf("redis does not answer at the given --redis-url: %v", err)
		}
	}
	return stores, nil
}

// checkStoreFlags checks the store flags that serve, keys and import share.
func checkStoreFlags(cmd string, sc service.StoreConfig) error {
	if sc.Redis() {
		if err := redisstore.CheckURL(sc.RedisURL); err != nil {
			return usageErrorf("%s: --redis-url: %w", cmd, err)
		}
	}
	if sc.RedisTimeout <= 0 {
		return usageErrorf("%s: --redis-timeout must be positive, not %s", cmd, sc.RedisTimeout)
	}
	return nil
}
