package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/inmem"
	"github.com/petstore/orderd/internal/keyfile"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/redisstore"
)

// Stores are the stores of one deployment, in Redis or in the process and a keys file, as
// its StoreConfig says. serve, keys and import all open theirs with OpenStores.
type Stores struct {
	Orders order.Store
	Pets   order.PetStore
	Keys   auth.KeyStore

	cfg StoreConfig
	// In Redis: the client they share and the stores that import.
	rdb         goredis.UniversalClient
	redisOrders *redisstore.Orders
	redisPets   *redisstore.Pets
	redisKeys   *redisstore.Keys
	// In the process: the keys file, which a serving instance re-reads.
	keyFile *keyfile.Store
}

// OpenStores opens the stores that cfg names. It does not wait for Redis: go-redis connects
// on first use, so that a service can start while Redis is down (see Ready). A bad setting
// or data file is a *ConfigError.
func OpenStores(cfg StoreConfig) (*Stores, error) {
	cfg = cfg.withDefaults()
	if cfg.Redis() {
		return openRedis(cfg)
	}
	return openEmbedded(cfg)
}

func openRedis(cfg StoreConfig) (*Stores, error) {
	if cfg.KeysFile != "" || cfg.OrdersFile != "" || cfg.PetsFile != "" || cfg.Orders != nil || cfg.Pets != nil {
		return nil, configError(errors.New("with Redis, orders, pets and keys are in Redis: import files, do not name them"))
	}
	rdb, err := redisstore.Open(cfg.RedisURL, cfg.RedisTimeout)
	if err != nil {
		return nil, configError(err)
	}
	s := &Stores{cfg: cfg, rdb: rdb}
	p, t := cfg.RedisPrefix, cfg.RedisTimeout
	if s.redisOrders, err = redisstore.NewOrders(rdb, p, t); err == nil {
		if s.redisPets, err = redisstore.NewPets(rdb, p, t); err == nil {
			s.redisKeys, err = redisstore.NewKeys(rdb, p, t)
		}
	}
	if err != nil {
		rdb.Close()
		return nil, configError(err)
	}
	s.Orders, s.Pets, s.Keys = s.redisOrders, s.redisPets, s.redisKeys
	return s, nil
}

func openEmbedded(cfg StoreConfig) (*Stores, error) {
	if cfg.KeysFile == "" {
		return nil, configError(errors.New("a keys file is required without Redis"))
	}
	orderList, petList := cfg.Orders, cfg.Pets
	var err error
	if cfg.OrdersFile != "" {
		if orderList, err = ReadOrders(cfg.OrdersFile); err != nil {
			return nil, configError(err)
		}
	}
	if cfg.PetsFile != "" {
		if petList, err = ReadPets(cfg.PetsFile); err != nil {
			return nil, configError(err)
		}
	}
	orders, err := inmem.NewOrders(orderList)
	if err != nil {
		return nil, configError(err)
	}
	pets, err := inmem.NewPets(petList)
	if err != nil {
		return nil, configError(err)
	}
	keys, err := keyfile.Open(cfg.KeysFile, cfg.CreateKeysFile)
	if err != nil {
		return nil, configError(fmt.Errorf("keys file: %w", err))
	}
	cfg.Orders, cfg.Pets = nil, nil // held by the stores now, and not twice
	return &Stores{Orders: orders, Pets: pets, Keys: keys, cfg: cfg, keyFile: keys}, nil
}

// Mode is "redis" or "embedded".
func (s *Stores) Mode() string {
	if s.rdb != nil {
		return "redis"
	}
	return "embedded"
}

// Ready reports whether the stores can do the work of a request now: Redis decides for a
// probe caller within its timeout, so that a Redis that answers PING but refuses the work
// (out of memory, read-only, busy, not permitted) is not ready (redisstore.Ready says why);
// the process's stores are always ready.
func (s *Stores) Ready(ctx context.Context) error {
	if s.rdb == nil {
		return nil
	}
	return redisstore.Ready(ctx, s.rdb, s.cfg.RedisPrefix, s.cfg.RedisTimeout)
}

// Import writes orders and pets into Redis, leaving alone what is already there as the
// records say (it never undoes a cancel), and returns how many order fields changed. Running
// it twice changes nothing. The embedded stores are read from files at start instead.
func (s *Stores) Import(ctx context.Context, orders []order.Order, pets []order.Pet) (int64, error) {
	if s.rdb == nil {
		return 0, configError(errors.New("import needs Redis: the embedded stores read their files at start"))
	}
	// Both lists are checked before either is written: nothing half-imported.
	if err := order.ValidateAll(orders); err != nil {
		return 0, configError(err)
	}
	if err := order.ValidateAll(pets); err != nil {
		return 0, configError(err)
	}
	changed, err := s.redisOrders.Import(ctx, orders)
	if err != nil {
		return changed, err
	}
	return changed, s.redisPets.Import(ctx, pets)
}

// watch keeps what a serving instance holds current until ctx ends. In Redis there is
// nothing to do: every request reads the versions of the orders and of the keys in its one
// round trip (docs/redis-layout.md, "What each instance keeps"); in the process it re-reads
// the keys file when it changes, so that keys made or revoked with the command line take
// effect without a restart.
func (s *Stores) watch(ctx context.Context, log *slog.Logger) {
	if s.rdb != nil {
		return
	}
	s.keyFile.Watch(ctx, s.cfg.KeysReload, func(err error) {
		if err != nil {
			log.Error("keys file not reloaded; the keys loaded before stay in use", slog.String("error", err.Error()))
			return
		}
		log.Info("keys file reloaded")
	})
}

// limiterConfig is what the limiter is made from, besides the stores.
type limiterConfig struct {
	ban        ratelimit.BanPolicy
	fallback   Fallback
	now        func() time.Time
	onFallback func() // each decision the fallback makes
	// maxAnonymous caps the callers without a key that a limiter in the process remembers;
	// onForget is told of each one forgotten for the cap.
	maxAnonymous int
	onForget     func()
	log          *slog.Logger
}

// limiter returns the limiter that goes with the stores: counters and bans in Redis, shared
// by every instance, with the fallback while Redis cannot be reached; or in the process.
func (s *Stores) limiter(c limiterConfig) (ratelimit.Limiter, error) {
	inProcess := func() ratelimit.Limiter {
		return inmem.NewLimiter(c.now, c.ban, inmem.MaxAnonymous(c.maxAnonymous), inmem.OnForget(c.onForget))
	}
	if s.rdb == nil {
		return inProcess(), nil
	}
	var fallback ratelimit.Limiter
	switch c.fallback {
	case FallbackMemory:
		fallback = inProcess()
	case FallbackFail:
	default:
		return nil, configError(fmt.Errorf("limiter fallback must be %s or %s, not %q", FallbackMemory, FallbackFail, c.fallback))
	}
	l, err := redisstore.NewLimiter(s.rdb, redisstore.LimiterOptions{
		Prefix: s.cfg.RedisPrefix, Timeout: s.cfg.RedisTimeout, Clock: c.now, Ban: c.ban,
		Fallback: fallback, OnFallback: c.onFallback, Logger: c.log,
	})
	if err != nil {
		return nil, configError(err)
	}
	return l, nil
}

// Close closes the connection to Redis, if any.
func (s *Stores) Close() error {
	if s.rdb == nil {
		return nil
	}
	return s.rdb.Close()
}
