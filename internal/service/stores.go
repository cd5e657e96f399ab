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
	"go.opentelemetry.io/otel/trace"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/pagetoken"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/sqlitestore"
	"github.com/petstore/orderd/internal/webhook"
)

// Stores are one deployment's stores, all in Redis or all in one SQLite file (see StoreConfig).
type Stores struct {
	Orders order.Store
	Events order.EventLog // the log of Orders' changes, in the same storage
	Pets   order.PetStore
	Keys   order.KeyStore
	// Secrets holds the page-token secret used when Config.PageTokenSecret is empty.
	Secrets pagetoken.SecretStore
	// Webhooks are the endpoints Events are delivered to, and their delivery state.
	Webhooks webhook.Store

	backend
}

// backend is what Redis (redisStores) and the SQLite file (sqliteStores) each do their way.
type backend interface {
	Mode() string // "redis" or "embedded"
	// Ready reports whether the stores can do the work of a request now.
	Ready(ctx context.Context) error
	Close() error
	// importChecked is Import, once every record is checked.
	importChecked(ctx context.Context, c CheckedImport) (Imported, error)
	// limiter is Redis's, shared by every instance and falling back as cfg says; else inProcess.
	limiter(cfg Config, inProcess ratelimit.Limiter, onFallback func()) (ratelimit.Limiter, error)
	// observe logs once whether reads are answered from memory, and sends the SQLite file's
	// faults to report. (In Redis, a corrupt record fails its own request.)
	observe(log *slog.Logger, report func(*order.Fault))
	// trace makes the stores' work for a request child spans of the request's: go-redis's own
	// (redisotel), or the SQLite file's queries.
	trace(tp trace.TracerProvider) error
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
	c, err := CheckImport(order.Slice(orders, ImportBatch), order.Slice(pets, ImportBatch))
	if err != nil {
		return Imported{}, configError(err)
	}
	return s.ImportChecked(ctx, c)
}

// ImportBatch is how many records a batch of an import holds: enough that a batch's calls
// cost little more than its rows (docs/design.md, Import).
const ImportBatch = 8000

// CheckedImport is an import whose every record was checked: the only one ImportChecked takes.
type CheckedImport struct {
	orders       order.Batches[order.Order]
	pets         order.Batches[order.Pet]
	Orders, Pets int // how many records each holds
}

// CheckImport reads orders and pets through, checking every record (order.CheckEach), and
// writes nothing. A nil pets is none.
func CheckImport(orders order.Batches[order.Order], pets order.Batches[order.Pet]) (CheckedImport, error) {
	if pets == nil {
		pets = order.Slice[order.Pet](nil, 1)
	}
	c := CheckedImport{orders: orders, pets: pets}
	err := orders(order.CheckEach[order.Order](), func(b []order.Order) error { c.Orders += len(b); return nil })
	if err != nil {
		return CheckedImport{}, err
	}
	err = pets(order.CheckEach[order.Pet](), func(b []order.Pet) error { c.Pets += len(b); return nil })
	if err != nil {
		return CheckedImport{}, err
	}
	return c, nil
}

// ImportChecked is Import of what CheckImport read, read again as it is written. The stores
// check each record again as they write it: a file changed between the two readings is
// refused too, but in Redis the batches before the change are written.
func (s *Stores) ImportChecked(ctx context.Context, c CheckedImport) (Imported, error) {
	c.orders, c.pets = order.ReadAhead(c.orders, 2), order.ReadAhead(c.pets, 2)
	return s.importChecked(ctx, c)
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
	events, _ := redisstore.NewEvents(rdb, p, t)
	webhooks, _ := redisstore.NewWebhooks(rdb, p, t)
	return &Stores{Orders: orders, Events: events, Pets: pets, Keys: keys, Secrets: secrets, Webhooks: webhooks,
		backend: &redisStores{cfg: cfg, rdb: rdb, orders: orders, pets: pets}}, nil
}

// trace: go-redis's own spans (redisotel), without the commands' arguments, which name keys' hashes.
func (r *redisStores) trace(tp trace.TracerProvider) error {
	return redisotel.InstrumentTracing(r.rdb, redisotel.WithTracerProvider(tp), redisotel.WithDBStatement(false))
}

func (r *redisStores) Mode() string                             { return "redis" }
func (r *redisStores) Close() error                             { return r.rdb.Close() }
func (r *redisStores) observe(*slog.Logger, func(*order.Fault)) {}

// Ready lets Redis decide within its timeout: a Redis that answers PING but refuses the work
// (out of memory, read-only, busy, not permitted) is not ready.
func (r *redisStores) Ready(ctx context.Context) error {
	return redisstore.Ready(ctx, r.rdb, r.cfg.RedisPrefix, r.cfg.RedisTimeout)
}

func (r *redisStores) importChecked(ctx context.Context, c CheckedImport) (Imported, error) {
	changed, err := r.orders.ImportBatches(ctx, c.orders)
	if err == nil {
		err = r.pets.ImportBatches(ctx, c.pets)
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
		Orders: orders, Events: sqlitestore.NewEvents(db), Pets: sqlitestore.NewPets(db), Keys: sqlitestore.NewKeys(db),
		Secrets: sqlitestore.NewSecrets(db), Webhooks: sqlitestore.NewWebhooks(db), backend: sqliteStores{db},
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

// trace: a span for each query of the file that a request makes (sqlitestore.DB.Trace).
func (s sqliteStores) trace(tp trace.TracerProvider) error {
	s.Trace(tp)
	return nil
}

func (s sqliteStores) importChecked(ctx context.Context, c CheckedImport) (Imported, error) {
	n, err := s.ImportBatches(ctx, c.orders, c.pets) // one transaction
	return Imported{Imported: n}, err
}

func (s sqliteStores) limiter(_ Config, inProcess ratelimit.Limiter, _ func()) (ratelimit.Limiter, error) {
	return inProcess, nil
}

func (s sqliteStores) observe(log *slog.Logger, report func(*order.Fault)) {
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
