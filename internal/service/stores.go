package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/inmem"
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
	// Finder finds the orders of Orders by filter, a page at a time: the same store.
	Finder order.Finder
	Pets   order.PetStore
	Keys   auth.KeyStore
	// Secrets holds the page-token secret used when Config.PageTokenSecret is empty.
	Secrets pagetoken.SecretStore

	cfg StoreConfig
	// In Redis: the client they share and the stores that import.
	rdb         goredis.UniversalClient
	redisOrders *redisstore.Orders
	redisPets   *redisstore.Pets
	redisKeys   *redisstore.Keys
	// In the SQLite file: the file they share, which imports.
	db *sqlitestore.DB
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
	var secrets *redisstore.Secrets
	if err == nil {
		secrets, err = redisstore.NewSecrets(rdb, p, t)
	}
	if err != nil {
		rdb.Close()
		return nil, configError(err)
	}
	s.Orders, s.Finder, s.Pets, s.Keys, s.Secrets = s.redisOrders, s.redisOrders, s.redisPets, s.redisKeys, secrets
	return s, nil
}

func openEmbedded(cfg StoreConfig) (*Stores, error) {
	if err := checkDB(cfg); err != nil {
		return nil, configError(err)
	}
	db, err := sqlitestore.Open(cfg.DB, 0)
	if err != nil {
		// The file exists or may be made, in a directory that exists: what is left is a
		// file that is not SQLite, or not readable and writable by this process.
		return nil, configError(err)
	}
	orders := sqlitestore.NewOrders(db)
	return &Stores{
		Orders: orders, Finder: orders, Pets: sqlitestore.NewPets(db), Keys: sqlitestore.NewKeys(db),
		Secrets: sqlitestore.NewSecrets(db), cfg: cfg, db: db,
	}, nil
}

// logReadCache says, once, whether the SQLite file's unchanged reads are answered from
// memory (sqlitestore.DB.ReadCache), and why not: at info where that is by design (the
// system), as a warning otherwise. Nothing in Redis mode.
func (s *Stores) logReadCache(log *slog.Logger) {
	if s.db == nil {
		return
	}
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

// checkDB says, before SQLite tries, why cfg.DB cannot be opened, in the operator's words:
// SQLite's own message would be "unable to open database file" for each of these.
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
// the SQLite file unless it has a fault that lasts until a restart (a *store.Fault: it is
// corrupt, or it or its -shm was replaced under the process) or its disk was last found full
// (sqlitestore.DB.Ready). A file that cannot be written is refused at start; a failing disk
// fails the requests themselves, with 503.
func (s *Stores) Ready(ctx context.Context) error {
	if s.rdb == nil {
		return s.db.Ready(ctx)
	}
	return redisstore.Ready(ctx, s.rdb, s.cfg.RedisPrefix, s.cfg.RedisTimeout)
}

// OnFault makes report be told of the faults the stores find (sqlitestore.DB.OnFault). In
// Redis, a record that does not parse fails its request with store.ErrCorrupt, which the
// request's own log line names; nothing is reported here.
func (s *Stores) OnFault(report func(*store.Fault)) {
	if s.db != nil {
		s.db.OnFault(report)
	}
}

// Imported is what an import wrote. Each store counts in its own unit: the SQLite file
// counts the records it added and updated, Redis the order fields it changed.
type Imported struct {
	sqlitestore.Imported
	OrderFieldsChanged int64
}

// Import writes orders and pets into the store: new records are added, the data of existing
// ones updated, and the status of an existing order is left as it is (an import never
// undoes a cancel). Running it twice changes nothing.
func (s *Stores) Import(ctx context.Context, orders []order.Order, pets []order.Pet) (Imported, error) {
	// Both lists are checked before either is written: nothing half-imported.
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
	if err != nil {
		return Imported{OrderFieldsChanged: changed}, err
	}
	return Imported{OrderFieldsChanged: changed}, s.redisPets.Import(ctx, pets)
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

// Close closes the connection to Redis or the SQLite file.
func (s *Stores) Close() error {
	if s.db != nil {
		return s.db.Close()
	}
	return s.rdb.Close()
}
