// Package redisstore keeps what the service's instances share in Redis (docs/redis-layout.md).
// Each New* returns the store of the deployment whose keys start with prefix.
package redisstore

import (
	"cmp"
	"context"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	randv2 "math/rand/v2"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
)

// DefaultTimeout bounds every Redis call: a Redis that does not answer never hangs a request.
const DefaultTimeout = time.Second

// Open returns a client for url without connecting, so the service starts while Redis is down:
//
//	redis://[user:pass@]host:port[/db]            one node (rediss:// for TLS)
//	redis://host:port?master_name=NAME&addr=h2:p2  Sentinel: the sentinels, and the primary's name
//	redis+cluster://host:port?addr=h2:p2           Cluster: seed nodes (rediss+cluster:// for TLS)
func Open(rawURL string, timeout time.Duration) (rdb redis.UniversalClient, err error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redis URL: %w", err)
	}
	q, timeout := u.Query(), cmp.Or(max(timeout, 0), DefaultTimeout)
	// Every call goes to the primary, which holds every acknowledged write, once: it may have run.
	for _, name := range []string{"max_retries", "read_only", "route_by_latency", "route_randomly", "replica_only", "use_disconnected_replicas"} {
		if q.Has(name) {
			return nil, fmt.Errorf("redis URL: %s is not allowed: every call goes to the primary, once", name)
		}
	}
	q.Set("max_retries", "-1")
	for _, name := range []string{"dial_timeout", "read_timeout", "write_timeout", "pool_timeout"} {
		q.Set(name, cmp.Or(q.Get(name), timeout.String()))
	}
	scheme := u.Scheme
	u.Scheme, u.RawQuery = strings.TrimSuffix(scheme, "+cluster"), q.Encode()
	switch s := u.String(); { // ContextTimeoutEnabled: callContext's deadline bounds the socket reads too
	case u.Scheme != "redis" && u.Scheme != "rediss":
		return nil, fmt.Errorf("redis URL: scheme %q is not redis, rediss, redis+cluster or rediss+cluster", scheme)
	case scheme != u.Scheme:
		var o *redis.ClusterOptions
		if o, err = redis.ParseClusterURL(s); err == nil {
			o.ContextTimeoutEnabled, rdb = true, redis.NewClusterClient(o)
		}
	case q.Has("master_name"):
		var o *redis.FailoverOptions
		if o, err = redis.ParseFailoverURL(s); err == nil {
			o.ContextTimeoutEnabled, rdb = true, redis.NewFailoverClient(o)
		}
	default:
		var o *redis.Options
		if o, err = redis.ParseURL(s); err == nil {
			o.ContextTimeoutEnabled, rdb = true, redis.NewClient(o)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("redis URL: %w", err)
	}
	return rdb, nil
}

// CheckURL reports whether Open accepts rawURL.
func CheckURL(rawURL string) error {
	c, err := Open(rawURL, DefaultTimeout)
	if err != nil {
		return err
	}
	return c.Close()
}

// SetLogger sends go-redis's messages and the stores' reports to log; the last call wins.
func SetLogger(log *slog.Logger) {
	storeLogger.Store(log)
	setLoggerOnce.Do(func() { redis.SetLogger(slogPrinter{}) })
}

var (
	setLoggerOnce sync.Once
	storeLogger   atomic.Pointer[slog.Logger]
	discard       = slog.New(slog.DiscardHandler)
)

func packageLogger() *slog.Logger { return cmp.Or(storeLogger.Load(), discard) }

type slogPrinter struct{}

func (slogPrinter) Printf(ctx context.Context, format string, v ...any) {
	level := slog.LevelWarn
	if strings.HasPrefix(format, "redis: connection pool: failed to") {
		level = slog.LevelDebug // repeated while Redis is down, an outage the service warns of itself
	}
	packageLogger().Log(ctx, level, "redis client: "+fmt.Sprintf(format, v...))
}

// conn is what every store of one deployment holds: the client, its keys and its bound.
type conn struct {
	rdb     redis.UniversalClient
	k       names
	timeout time.Duration
}

func newConn(rdb redis.UniversalClient, prefix string, timeout time.Duration) (conn, error) {
	k, err := newNames(prefix)
	return conn{rdb: rdb, k: k, timeout: cmp.Or(max(timeout, 0), DefaultTimeout)}, err
}

// names are the Redis keys of one deployment (docs/redis-layout.md, hash tags in braces).
type names struct {
	prefix, ordersData, ordersStatus, ordersEvents, keysByHash, petsData, pageTokenSecret, webhookIDs string
	// The version's counter and generation (MGET), and the KEYS of the writes.
	ordersVersion, keysVersion, orders, keys []string
}

// validPrefix keeps key names free of braces, spaces and anything a client could inject.
var validPrefix = regexp.MustCompile(`^[A-Za-z0-9_:.-]{1,64}$`)

// DefaultPrefix starts every key of the service.
const DefaultPrefix = "orderd"

func newNames(prefix string) (names, error) {
	if !validPrefix.MatchString(prefix) {
		return names{}, fmt.Errorf("redis key prefix %q: want 1 to 64 of A-Z a-z 0-9 _ : . -", prefix)
	}
	o, k := "{"+prefix+":orders}:", "{"+prefix+":keys}:"
	n := names{prefix: prefix, petsData: "{" + prefix + ":pets}:data",
		pageTokenSecret: "{" + prefix + ":settings}:page-token-secret", webhookIDs: "{" + prefix + ":webhooks}:ids",
		orders: []string{o + "data", o + "status", o + "version", o + "generation", o + "events"},
		keys:   []string{k + "by-name", k + "by-hash", k + "version", k + "generation"}}
	n.ordersData, n.ordersStatus, n.ordersVersion, n.ordersEvents = n.orders[0], n.orders[1], n.orders[2:4], n.orders[4]
	n.keysByHash, n.keysVersion = n.keys[1], n.keys[2:4]
	return n, nil
}

// webhook is an endpoint's hash, in its ids' slot; ids hold no brace.
func (n names) webhook(id string) string { return "{" + n.prefix + ":webhooks}:endpoint:" + id }

// rateLimit is caller's hash; caller ids hold no brace.
func (n names) rateLimit(caller string) string { return "{" + n.prefix + ":rl:" + caller + "}" }

// The Lua scripts; those that write several keys check them first (writes.lua).
var (
	//go:embed *.lua
	luaFiles embed.FS

	rateScript      = script("rate.lua")
	eventsScript    = script("events.lua")
	trimScript      = script("trim.lua")
	cancelScript    = script("writes.lua", "cancel.lua")
	importScript    = script("writes.lua", "import.lua")
	addKeyScript    = script("writes.lua", "addkey.lua")
	revokeKeyScript = script("writes.lua", "revokekey.lua")
)

func script(files ...string) *redis.Script {
	var src string
	for _, f := range files {
		b, _ := luaFiles.ReadFile(f) // embedded: never fails
		src += string(b)
	}
	return redis.NewScript(src)
}

func callContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, timeout, errCallTimeout)
}

// run runs script, sent once.
func (c conn) run(ctx context.Context, script *redis.Script, keys []string, args ...any) (*redis.Cmd, error) {
	ctx, cancel := callContext(ctx, c.timeout)
	defer cancel()
	cmd := script.Run(ctx, onceScripter{process: c.rdb.Process}, keys, args...)
	return cmd, classify(ctx, cmd.Err())
}

// sentOnce is a command never sent again: it may have run (docs/redis-layout.md).
type sentOnce struct{ redis.Cmder }

func (sentOnce) NoRetry() bool { return true }

// onceScripter sends Script.Run's EVALSHA and EVAL with a client's or a pipeline's Process, once.
type onceScripter struct {
	redis.Scripter
	process func(context.Context, redis.Cmder) error
}

func (o onceScripter) Eval(ctx context.Context, src string, keys []string, args ...any) *redis.Cmd {
	return o.send(ctx, "eval", src, keys, args)
}
func (o onceScripter) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	return o.send(ctx, "evalsha", sha, keys, args)
}

func (o onceScripter) send(ctx context.Context, name, script string, keys []string, args []any) *redis.Cmd {
	cmdArgs := append(make([]any, 0, 3+len(keys)+len(args)), name, script, len(keys))
	for _, k := range keys {
		cmdArgs = append(cmdArgs, k)
	}
	cmd := redis.NewCmd(ctx, append(cmdArgs, args...)...)
	_ = o.process(ctx, sentOnce{cmd}) // its error is cmd's
	return cmd
}

// errCallTimeout is the cause of a call's context that our own bound ended.
var errCallTimeout = errors.New("redis did not answer within the call timeout")

// classify wraps an outage in order.ErrUnavailable (never a context error), WRONGTYPE in order.ErrCorrupt.
func classify(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, order.ErrUnavailable) || errors.Is(err, order.ErrCorrupt) {
		return err
	}
	code, _, _ := strings.Cut(err.Error(), " ")
	switch reply, cause := errors.As(err, new(redis.Error)), context.Cause(ctx); {
	case cause != nil && !errors.Is(cause, errCallTimeout):
		return ctx.Err()
	case !reply && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)): // our bound ended it
		return fmt.Errorf("%w: redis: %w (%v)", order.ErrUnavailable, errCallTimeout, err)
	// States of the server or the deployment (NOPERM: the ACL user's rights), not of a request;
	// an error raised by redis.call in a script keeps its code, one of the script itself is ERR.
	case !reply, strings.HasPrefix(err.Error(), "ERR max number of clients reached"), slices.Contains([]string{"LOADING",
		"BUSY", "OOM", "MISCONF", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "NOREPLICAS", "NOPERM", "NOAUTH",
		"WRONGPASS", "DENIED", "UNKILLABLE"}, code):
		return fmt.Errorf("%w: redis: %w", order.ErrUnavailable, err)
	case code == "WRONGTYPE":
		return fmt.Errorf("%w: redis: %w", order.ErrCorrupt, err)
	}
	return fmt.Errorf("redis: %w", err)
}

// trip is what a request's round trip (order.Trip) read, and a key answered from the cache before it.
type trip struct {
	prefix       string
	read         bool   // orders and keys hold what the round trip read
	orders, keys uint64 // versions
	answered     *Keys  // the store that answered hash from its cache at answeredAt
	hash         order.Hash
	answeredAt   uint64
}

// tripOf returns ctx's Trip's reads for prefix's deployment, or nil outside a Trip.
func tripOf(ctx context.Context, prefix string) *trip {
	if t := order.TripOf(ctx); t != nil {
		if t.Carried == nil {
			t.Carried = &trip{prefix: prefix}
		}
		if c, _ := t.Carried.(*trip); c != nil && c.prefix == prefix {
			return c
		}
	}
	return nil
}

// Confirm reads a key answered from the cache again unless the round trip read its version.
func (t *trip) Confirm(ctx context.Context) error {
	s := t.answered
	if t.answered = nil; s == nil || t.read && t.keys == t.answeredAt {
		return nil
	}
	_, err := s.read(ctx, t.hash)
	return err
}

// version reads MGET counter generation; without a generation (Redis lost it) it is new at every read.
func version(vals []any) (v uint64, kept bool, err error) {
	counter, _ := vals[0].(string)
	if _, err := strconv.ParseUint(counter, 10, 64); err != nil && vals[0] != nil {
		return 0, false, fmt.Errorf("%w: version counter %q", errBadRecord, counter)
	}
	generation, kept := vals[1].(string)
	if !kept {
		return randv2.Uint64(), false, nil
	}
	h := fnv.New64a()
	h.Write([]byte(counter + " " + generation))
	return h.Sum64(), true, nil
}

func newGeneration() string { return rand.Text() }
