package service

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	goredis "github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/pagetoken"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/sqlitestore"
	"github.com/petstore/orderd/internal/store"
)

// Stores are one deployment's stores, all in Redis or all in one SQLite file (see StoreConfig).
type Stores struct {
	Orders order.Store
	Finder order.Finder // the same store as Orders
	Pets   order.PetStore
	Keys   auth.KeyStore
	// Secrets holds the page-token secret used when Config.PageTokenSecret is empty.
	Secrets pagetoken.SecretStore

	backend
}

// backend is what Redis (redisStores) and the SQLite file (sqliteStores) each do their way.
type backend interface {
	Mode() string // "redis" or "embedded"
	// Ready reports whether the stores can do the work of a request now.
	Ready(ctx context.Context) error
	Close() error
	// importChecked is Import, once both lists are checked.
	importChecked(ctx context.Context, orders []order.Order, pets []order.Pet) (Imported, error)
	// limiter is Redis's, shared by every instance and falling back as cfg says; else inProcess.
	limiter(cfg Config, inProcess ratelimit.Limiter, onFallback func()) (ratelimit.Limiter, error)
	// observe logs once whether reads are answered from memory, and sends the SQLite file's
	// faults to report. (In Redis, a corrupt record fails its own request.)
	observe(log *slog.Logger, report func(*store.Fault))
}

// OpenStores opens the stores cfg names; a bad setting or file is a *ConfigError. It does not
// wait for Redis: go-redis connects on first use, so a service can start while Redis is down.
func OpenStores(cfg StoreConfig) (*Stores, error) {
	cfg = cfg.withDefaults()
	if cfg.Redis() {
		return openRedis(cfg)
	}
	return openEmbedded(cfg)
}

// Imported is what an import wrote: records added and updated in SQLite, order fields in Redis.
type Imported struct {
	sqlitestore.Imported
	OrderFieldsChanged int64
}

// Import adds new orders and pets and updates existing ones, but never an order's status (an
// import never undoes a cancel). Both lists are checked before either is written.
func (s *Stores) Import(ctx context.Context, orders []order.Order, pets []order.Pet) (Imported, error) {
	if err := cmp.Or(order.ValidateAll(orders), order.ValidateAll(pets)); err != nil {
		return Imported{}, configError(err)
	}
	return s.importChecked(ctx, orders, pets)
}

// redisStores are the stores in Redis: the client they share and the stores that import.
type redisStores struct {
	cfg    StoreConfig
	rdb    goredis.UniversalClient
	orders *redisstore.Orders
	pets   *redisstore.Pets
}

func openRedis(cfg StoreConfig) (*Stores, error) {
	rdb, err := redisstore.Open(cfg.RedisURL, cfg.RedisTimeout)
	if err != nil {
		return nil, configError(err)
	}
	p, t := cfg.RedisPrefix, cfg.RedisTimeout
	orders, err := redisstore.NewOrders(rdb, p, t)
	if err != nil {
		rdb.Close()
		return nil, configError(err)
	}
	// The others check the same prefix as NewOrders, which took it.
	pets, _ := redisstore.NewPets(rdb, p, t)
	keys, _ := redisstore.NewKeys(rdb, p, t)
	secrets, _ := redisstore.NewSecrets(rdb, p, t)
	return &Stores{Orders: orders, Finder: orders, Pets: pets, Keys: keys, Secrets: secrets,
		backend: &redisStores{cfg: cfg, rdb: rdb, orders: orders, pets: pets}}, nil
}

func (r *redisStores) Mode() string                             { return "redis" }
func (r *redisStores) Close() error                             { return r.rdb.Close() }
func (r *redisStores) observe(*slog.Logger, func(*store.Fault)) {}

// Ready lets Redis decide within its timeout: a Redis that answers PING but refuses the work
// (out of memory, read-only, busy, not permitted) is not ready.
func (r *redisStores) Ready(ctx context.Context) error {
	return redisstore.Ready(ctx, r.rdb, r.cfg.RedisPrefix, r.cfg.RedisTimeout)
}

func (r *redisStores) importChecked(ctx context.Context, orders []order.Order, pets []order.Pet) (Imported, error) {
	changed, err := r.orders.Import(ctx, orders)
	if err == nil {
		err = r.pets.Import(ctx, pets)
	}
	return Imported{OrderFieldsChanged: changed}, err
}

func (r *redisStores) limiter(cfg Config, inProcess ratelimit.Limiter, onFallback func()) (ratelimit.Limiter, error) {
	var fallback ratelimit.Limiter
	switch cfg.LimiterFallback {
	case FallbackMemory:
		fallback = inProcess
	case FallbackFail:
	default:
		return nil, configError(fmt.Errorf("limiter fallback must be %s or %s, not %q", FallbackMemory, FallbackFail, cfg.LimiterFallback))
	}
	l, err := redisstore.NewLimiter(r.rdb, redisstore.LimiterOptions{
		Prefix: r.cfg.RedisPrefix, Timeout: r.cfg.RedisTimeout, Clock: cfg.Now, Ban: cfg.Ban,
		Fallback: fallback, OnFallback: onFallback, Logger: cfg.Logger,
	})
	return l, configError(err)
}

// sqliteStores are the stores in the SQLite file; its Ready and Close are the file's.
type sqliteStores struct{ *sqlitestore.DB }

func openEmbedded(cfg StoreConfig) (*Stores, error) {
	if err := checkDB(cfg); err != nil {
		return nil, configError(err)
	}
	db, err := sqlitestore.Open(cfg.DB, 0)
	if err != nil {
		// What checkDB leaves: a file that is not SQLite, or that this process cannot use.
		return nil, configError(err)
	}
	orders := sqlitestore.NewOrders(db)
	return &Stores{
		Orders: orders, Finder: orders, Pets: sqlitestore.NewPets(db), Keys: sqlitestore.NewKeys(db),
		Secrets: sqlitestore.NewSecrets(db), backend: sqliteStores{db},
	}, nil
}

// checkDB says, in the operator's words, why cfg.DB cannot be opened, where SQLite would say
// "unable to open database file" for each.
func checkDB(cfg StoreConfig) error {
	if cfg.DB == "" {
		return errors.New("no SQLite file named: the embedded mode needs one")
	}
	info, err := os.Stat(cfg.DB)
	switch {
	case err == nil && info.IsDir():
		return fmt.Errorf("SQLite file %s: is a directory", cfg.DB)
	case err == nil:
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("SQLite file: %w", err)
	}
	dir := filepath.Dir(cfg.DB)
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return fmt.Errorf("SQLite file %s: the directory %s does not exist", cfg.DB, dir)
	}
	if !cfg.CreateDB {
		return fmt.Errorf("SQLite file %s: no such file (orderd import or orderd keys create makes it)", cfg.DB)
	}
	return nil
}

func (s sqliteStores) Mode() string { return "embedded" }

func (s sqliteStores) importChecked(ctx context.Context, orders []order.Order, pets []order.Pet) (Imported, error) {
	n, err := s.Import(ctx, orders, pets) // one transaction
	return Imported{Imported: n}, err
}

func (s sqliteStores) limiter(_ Config, inProcess ratelimit.Limiter, _ func()) (ratelimit.Limiter, error) {
	return inProcess, nil
}

func (s sqliteStores) observe(log *slog.Logger, report func(*store.Fault)) {
	s.OnFault(report)
	err := s.ReadCache()
	switch {
	case err == nil:
		log.Info("sqlite read cache: on; a read of an unchanged file is answered from memory")
	case errors.Is(err, sqlitestore.ErrReadCacheUnsupported):
		log.Info("sqlite read cache: off; every read queries the file", slog.String("reason", err.Error()))
	default:
		log.Warn("sqlite read cache: off; every read queries the file", slog.String("reason", err.Error()))
	}
}
