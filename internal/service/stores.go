package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/redis/go-redis/extra/redisotel/v9"
	goredis "github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/pagetoken"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/sqlitestore"
	"github.com/petstore/orderd/internal/tracing"
	"github.com/petstore/orderd/internal/webhook"
)

// Stores are one deployment's stores, all in Redis or all in one SQLite file (see StoreConfig).
type Stores struct {
	Orders   order.Store
	Events   order.EventLog // the log of Orders' changes, in the same storage
	Pets     order.PetStore
	Keys     order.KeyStore
	Secrets  pagetoken.SecretStore // the page-token secret, when Config.PageTokenSecret is empty
	Webhooks webhook.Store         // the endpoints Events are delivered to, and their delivery state

	cfg StoreConfig
	rdb goredis.UniversalClient // nil in the embedded mode
	db  *sqlitestore.DB         // nil with Redis
}

// OpenStores opens the stores cfg names; a bad setting or file is a *ConfigError. It does not
// wait for Redis: go-redis connects on first use, so a service can start while Redis is down.
func OpenStores(cfg StoreConfig) (*Stores, error) {
	s := &Stores{cfg: cfg}
	if !cfg.Redis() {
		if err := checkDB(cfg); err != nil {
			return nil, &ConfigError{err}
		}
		db, err := sqlitestore.Open(cfg.DB, 0)
		if err != nil { // what checkDB leaves: a file that is not SQLite, or that this process cannot use
			return nil, &ConfigError{err}
		}
		s.db, s.Orders, s.Events, s.Pets = db, sqlitestore.NewOrders(db), sqlitestore.NewEvents(db), sqlitestore.NewPets(db)
		s.Keys, s.Secrets, s.Webhooks = sqlitestore.NewKeys(db), sqlitestore.NewSecrets(db), sqlitestore.NewWebhooks(db)
		return s, nil
	}
	rdb, err := redisstore.Open(cfg.RedisURL, cfg.RedisTimeout)
	if err != nil {
		return nil, &ConfigError{err}
	}
	p, t := cfg.RedisPrefix, cfg.RedisTimeout
	orders, err := redisstore.NewOrders(rdb, p, t)
	if err != nil {
		rdb.Close()
		return nil, &ConfigError{err}
	}
	// The others check the same prefix as NewOrders, which took it.
	s.rdb, s.Orders = rdb, orders
	s.Pets, _ = redisstore.NewPets(rdb, p, t)
	s.Keys, _ = redisstore.NewKeys(rdb, p, t)
	s.Secrets, _ = redisstore.NewSecrets(rdb, p, t)
	s.Events, _ = redisstore.NewEvents(rdb, p, t)
	s.Webhooks, _ = redisstore.NewWebhooks(rdb, p, t)
	return s, nil
}

// checkDB says, in the operator's words, why cfg.DB cannot be opened, where SQLite would say
// "unable to open database file" for each.
func checkDB(cfg StoreConfig) error {
	info, err := os.Stat(cfg.DB)
	dir, dirErr := os.Stat(filepath.Dir(cfg.DB))
	switch {
	case cfg.DB == "":
		return errors.New("no SQLite file named: the embedded mode needs one")
	case err == nil && info.IsDir():
		return fmt.Errorf("SQLite file %s: is a directory", cfg.DB)
	case err == nil:
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("SQLite file: %w", err)
	case dirErr != nil || !dir.IsDir():
		return fmt.Errorf("SQLite file %s: the directory %s does not exist", cfg.DB, filepath.Dir(cfg.DB))
	case !cfg.CreateDB:
		return fmt.Errorf("SQLite file %s: no such file (orderd import or orderd keys create makes it)", cfg.DB)
	}
	return nil
}

// Ready reports whether the stores can do the work of a request now. Redis decides within
// its timeout: one that answers PING but refuses the work (out of memory, read-only, busy,
// not permitted) is not ready.
func (s *Stores) Ready(ctx context.Context) error {
	if s.rdb != nil {
		return redisstore.Ready(ctx, s.rdb, s.cfg.RedisPrefix, s.cfg.RedisTimeout)
	}
	return s.db.Ready(ctx)
}

// Close closes the Redis client or the SQLite file.
func (s *Stores) Close() error {
	if s.rdb != nil {
		return s.rdb.Close()
	}
	return s.db.Close()
}

// Imported is what an import wrote: records added and updated in SQLite, order fields in Redis.
type Imported struct {
	sqlitestore.Imported
	OrderFieldsChanged int64
}

// ImportBatch is how many records a batch of an import holds: enough that a batch's calls
// cost little more than its rows (docs/design.md, Import).
const ImportBatch = 8000

// ImportBatches adds new orders and pets and updates existing ones, but never an order's status
// (an import never undoes a cancel). The caller checked the batches before (order.CheckEach); the
// stores check each again as they write it: Redis keeps the batches before a refused one, SQLite none.
func (s *Stores) ImportBatches(ctx context.Context, orders order.Batches[order.Order], pets order.Batches[order.Pet]) (Imported, error) {
	if s.db != nil {
		n, err := s.db.ImportBatches(ctx, orders, pets)
		return Imported{Imported: n}, err
	}
	changed, err := s.Orders.(*redisstore.Orders).ImportBatches(ctx, orders)
	if err == nil {
		err = s.Pets.(*redisstore.Pets).ImportBatches(ctx, pets)
	}
	return Imported{OrderFieldsChanged: changed}, err
}

// observe makes the stores' work for a request child spans of the request's when tp is not nil:
// go-redis's own (without the commands' arguments, which name keys' hashes), or the SQLite
// file's queries. It sends the file's faults to report (in Redis, a corrupt record fails its
// own request), and logs once whether the file's reads are answered from memory.
func (s *Stores) observe(log *slog.Logger, report func(*order.Fault), tp *tracing.Provider) error {
	if s.rdb != nil && tp != nil {
		return redisotel.InstrumentTracing(s.rdb, redisotel.WithTracerProvider(tp), redisotel.WithDBStatement(false))
	} else if s.rdb != nil {
		return nil
	}
	if tp != nil {
		s.db.Trace(tp)
	}
	s.db.OnFault(report)
	switch err := s.db.ReadCache(); {
	case err == nil:
		log.Info("sqlite read cache: on; a read of an unchanged file is answered from memory")
	case errors.Is(err, sqlitestore.ErrReadCacheUnsupported):
		log.Info("sqlite read cache: off; every read queries the file", slog.String("reason", err.Error()))
	default:
		log.Warn("sqlite read cache: off; every read queries the file", slog.String("reason", err.Error()))
	}
	return nil
}
