package main

import (
	"context"
	"flag"

	"github.com/petstore/orderd/internal/service"
)

// registerRedis adds the Redis flags that serve, keys and import share.
func registerRedis(fs *flag.FlagSet, sc *service.StoreConfig) {
	def := service.DefaultConfig().Store
	fs.StringVar(&sc.RedisURL, "redis-url", "", "Redis to share orders, keys, counters and bans through: redis://, rediss://, redis+cluster://, or ?master_name= for Sentinel (none: embedded mode)")
	fs.StringVar(&sc.RedisPrefix, "redis-prefix", def.RedisPrefix, "start of every Redis key, so that deployments can share a Redis")
	fs.DurationVar(&sc.RedisTimeout, "redis-timeout", def.RedisTimeout, "bound on each Redis call")
}

// registerDB adds --db, which serve, keys and import share.
func registerDB(fs *flag.FlagSet, sc *service.StoreConfig) {
	fs.StringVar(&sc.DB, "db", service.DefaultDB, "SQLite file of orders, pets and keys (the embedded mode; unused with --redis-url)")
}

// openStores opens the stores for the keys and import commands, which, unlike serve, cannot
// do their work later: Redis must answer now.
func openStores(ctx context.Context, sc service.StoreConfig) (*service.Stores, error) {
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
