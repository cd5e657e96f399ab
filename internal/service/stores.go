package service

import (
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

// Stores are the stores of one deployment, in Redis or in one SQLite file, as its
// StoreConfig says. serve, keys and import all open theirs with OpenStores.
type Stores struct {
	Orders order.Store
	Finder order.Finder // the same store as Orders
	Pets   order.PetStore
	Keys   auth.KeyStore
	// Secrets holds the page-token secret used when Config.PageTokenSecret is empty.
	Secrets pagetoken.SecretStore

	db *sqlitestore.DB // the embedded mode; nil in Redis, which has the fields below

	cfg         StoreConfig
	rdb         goredis.UniversalClient
	redisOrders *redisstore.Orders
	redisPets   *redisstore.Pets
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

// Mode is "redis" or "embedded".
func (s *Stores) Mode() string {
	if s.db != nil {
		return "embedded"
	}
	return "redis"
}

// Ready reports whether the stores can do a request's work now: a Redis that answers PING but
// refuses the work (out of memory, read-only, busy, not permitted) is not ready.
func (s *Stores) Ready(ctx context.Context) error {
	if s.db != nil {
		return s.db.Ready(ctx)
	}
	return redisstore.Ready(ctx, s.rdb, s.cfg.RedisPrefix, s.cfg.RedisTimeout)
}

// Close closes the SQLite file or the Redis client.
func (s *Stores) Close() error {
	if s.db != nil {
		return s.db.Close()
	}
	return s.rdb.Close()
}

// Imported is what an import wrote. The SQLite file counts the records it added and
// updated, Redis the order fields it changed.
type Imported struct {
	sqlitestore.Imported
	OrderFieldsChanged int64
}

// Import writes orders and pets into the store: new records are added, the data of existing
// ones updated, and the status of an existing order is left as it is (an import never
// undoes a cancel). Both lists are checked before either is written.
func (s *Stores) Import(ctx context.Context, orders []order.Order, pets []order.Pet) (Imported, error) {
	if err := order.ValidateAll(orders); err != nil {
		return Imported{}, configError(err)
	}
	if err := order.ValidateAll(pets); err != nil {
		return Imported{}, configError(err)
	}
	if s.db != nil {
		n, err := s.db.Import(ctx, orders, pets) // one transaction
		return Imported{Imported: n}, err
	}
	changed, err := s.redisOrders.Import(ctx, orders)
	if err == nil {
		err = s.redisPets.Import(ctx, pets)
	}
	return Imported{OrderFieldsChanged: changed}, err
}

// limiter returns the limiter that goes with the stores: in Redis, shared by every instance
// and falling back as cfg says; otherwise inProcess.
func (s *Stores) limiter(cfg Config, inProcess ratelimit.Limiter, onFallback func()) (ratelimit.Limiter, error) {
	if s.db != nil {
		return inProcess, nil
	}
	var fallback ratelimit.Limiter
	switch cfg.LimiterFallback {
	case FallbackMemory:
		fallback = inProcess
	case FallbackFail:
	default:
		return nil, configError(fmt.Errorf("limiter fallback must be %s or %s, not %q", FallbackMemory, FallbackFail, cfg.LimiterFallback))
	}
	l, err := redisstore.NewLimiter(s.rdb, redisstore.LimiterOptions{
		Prefix: s.cfg.RedisPrefix, Timeout: s.cfg.RedisTimeout, Clock: cfg.Now, Ban: cfg.Ban,
		Fallback: fallback, OnFallback: onFallback, Logger: cfg.Logger,
	})
	return l, configError(err)
}

// observe tells report of the SQLite file's faults and logs whether its unchanged reads are
// answered from memory (Redis has neither: a bad record fails its request, store.ErrCorrupt).
func (s *Stores) observe(log *slog.Logger, report func(*store.Fault)) {
	if s.db == nil {
		return
	}
	s.db.OnFault(report)
	err := s.db.ReadCache()
	switch {
	case err == nil:
		log.Info("sqlite read cache: on; a read of an unchanged file is answered from memory")
	case errors.Is(err, sqlitestore.ErrReadCacheUnsupported):
		log.Info("sqlite read cache: off; every read queries the file", slog.String("reason", err.Error()))
	default:
		log.Warn("sqlite read cache: off; every read queries the file", slog.String("reason", err.Error()))
	}
}

func openRedis(cfg StoreConfig) (*Stores, error) {
	rdb, err := redisstore.Open(cfg.RedisURL, cfg.RedisTimeout)
	if err != nil {
		return nil, configError(err)
	}
	s := &Stores{cfg: cfg, rdb: rdb}
	p, t := cfg.RedisPrefix, cfg.RedisTimeout
	if s.redisOrders, err = redisstore.NewOrders(rdb, p, t); err == nil {
		if s.redisPets, err = redisstore.NewPets(rdb, p, t); err == nil {
			if s.Keys, err = redisstore.NewKeys(rdb, p, t); err == nil {
				s.Secrets, err = redisstore.NewSecrets(rdb, p, t)
			}
		}
	}
	if err != nil {
		rdb.Close()
		return nil, configError(err)
	}
	s.Orders, s.Finder, s.Pets = s.redisOrders, s.redisOrders, s.redisPets
	return s, nil
}

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
		Secrets: sqlitestore.NewSecrets(db), db: db,
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
