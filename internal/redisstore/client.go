// Package redisstore keeps what the service's instances share in Redis (docs/redis-layout.md).
// Each New* returns the store of the deployment whose keys start with prefix.
package redisstore

import (
	"cmp"
	"context"
	"crypto/rand"
	"embed"
	"encoding/json"
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
	"github.com/petstore/orderd/internal/pagetoken"
	"github.com/petstore/orderd/internal/ratelimit"
)

// DefaultTimeout bounds every Redis call: a Redis that does not answer never hangs a request.
const DefaultTimeout = time.Second

// Open returns a client for url without connecting, so the service starts while Redis is down:
//
//	redis://[user:pass@]host:port[/db]            one node (rediss:// for TLS)
//	redis://host:port?master_name=NAME&addr=h2:p2  Sentinel: the sentinels, and the primary's name
//	redis+cluster://host:port?addr=h2:p2           Cluster: seed nodes (rediss+cluster:// for TLS)
//
// Timeouts not in the URL's query are timeout.
func Open(rawURL string, timeout time.Duration) (rdb redis.UniversalClient, err error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redis URL: %w", err)
	}
	q, timeout := u.Query(), cmp.Or(max(timeout, 0), DefaultTimeout)
	// Every call goes to the primary, which holds every acknowledged write, and is sent once:
	// it may have run (docs/redis-layout.md, "When Redis cannot be reached").
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
	// ContextTimeoutEnabled: callContext's deadline bounds the socket reads too.
	switch s := u.String(); {
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

// CheckURL reports whether rawURL is a Redis URL that Open accepts, without connecting.
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
	// Failures to connect repeat while Redis is down, an outage the service warns of itself.
	if strings.HasPrefix(format, "redis: connection pool: failed to") {
		level = slog.LevelDebug
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

// callContext bounds one Redis call in time, with errCallTimeout as the cause.
func callContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, timeout, errCallTimeout)
}

// run runs script, sent once, within the call timeout, and classifies its error.
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

// classify wraps an outage in order.ErrUnavailable (never a context error), WRONGTYPE in
// order.ErrCorrupt, and returns the request's own end as its context error.
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

// version reads MGET counter generation as order.Store reports it. Without a generation (Redis
// lost it, nothing wrote since) it is a new one at every read, which nothing is kept at.
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

// newGeneration is the generation a write's script sets with its change.
func newGeneration() string { return rand.Text() }

// Keys is an order.KeyStore in Redis, with a cache of the keys found at one version of them.
type Keys struct {
	conn
	mu    sync.Mutex
	at    uint64 // the version of the keys cached
	cache map[order.Hash]order.Key
}

func NewKeys(rdb redis.UniversalClient, prefix string, timeout time.Duration) (*Keys, error) {
	c, err := newConn(rdb, prefix, timeout)
	return &Keys{conn: c}, err
}

// Lookup returns the key with hash h: within a Trip from the cache, at the version the round
// trip read, or before it provisionally (confirmed by order.Confirm); else from Redis.
func (s *Keys) Lookup(ctx context.Context, h order.Hash) (order.Key, error) {
	if t := tripOf(ctx, s.k.prefix); t != nil {
		s.mu.Lock()
		k, ok := s.cache[h]
		at := s.at
		s.mu.Unlock()
		if ok && !t.read {
			t.answered, t.hash, t.answeredAt = s, h, at
		}
		if ok && (!t.read || t.keys == at) {
			return k, nil
		}
	}
	return s.read(ctx, h)
}

// read reads the keys' version, then the key, in one pipeline (not MULTI, which Redis refuses
// when out of memory), and caches it at that version: a revocation since would move it.
func (s *Keys) read(ctx context.Context, h order.Hash) (order.Key, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	p := s.rdb.Pipeline()
	ver, rec := p.MGet(ctx, s.k.keysVersion...), p.HGet(ctx, s.k.keysByHash, string(h))
	if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return order.Key{}, classify(ctx, err)
	}
	k, err := decodeKey(rec.Val())
	if rec.Err() != nil {
		err = order.ErrKeyNotFound
	}
	v, kept, verr := version(ver.Val())
	if err = cmp.Or(verr, err); kept && (err == nil || errors.Is(err, order.ErrKeyNotFound)) {
		s.mu.Lock()
		if s.at != v {
			s.at, s.cache = v, map[order.Hash]order.Key{}
		}
		if err == nil {
			s.cache[h] = k
		}
		s.mu.Unlock()
	}
	return k, err
}

// Add stores k if its name is unused.
func (s *Keys) Add(ctx context.Context, k order.Key) error {
	if err := k.Validate(); err != nil {
		return err
	}
	record, _ := json.Marshal(k) // never fails
	cmd, err := s.run(ctx, addKeyScript, s.k.keys, k.Name, string(k.Hash), string(record), newGeneration())
	if added, _ := cmd.Int64(); err == nil && added == 0 {
		return fmt.Errorf("%w: %q", order.ErrNameTaken, k.Name)
	}
	return err
}

// List returns every key, sorted by name.
func (s *Keys) List(ctx context.Context) ([]order.Key, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	all, err := s.rdb.HGetAll(ctx, s.k.keysByHash).Result()
	if err != nil {
		return nil, classify(ctx, err)
	}
	keys := make([]order.Key, 0, len(all))
	for _, raw := range all {
		k, err := decodeKey(raw)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b order.Key) int { return cmp.Compare(a.Name, b.Name) })
	return keys, nil
}

// Revoke removes the key named nameOrPrefix, else the first by name with that prefix (revokekey.lua).
func (s *Keys) Revoke(ctx context.Context, nameOrPrefix string) (order.Key, error) {
	byPrefix := map[bool]string{true: "1", false: "0"}[order.LooksLikePrefix(nameOrPrefix)]
	cmd, err := s.run(ctx, revokeKeyScript, s.k.keys, nameOrPrefix, byPrefix, newGeneration())
	if errors.Is(err, redis.Nil) {
		return order.Key{}, fmt.Errorf("%w: %q", order.ErrKeyNotFound, nameOrPrefix)
	} else if err != nil {
		return order.Key{}, err
	}
	return decodeKey(cmd.Val().(string)) // the record: nil was redis.Nil
}

func decodeKey(raw string) (order.Key, error) {
	var k order.Key
	if err := cmp.Or(json.Unmarshal([]byte(raw), &k), k.ValidateStored()); err != nil { // Stored: names from before CheckName's rules
		return order.Key{}, fmt.Errorf("%w: bad key record in redis: %w", order.ErrCorrupt, err)
	}
	return k, nil
}

// Secrets is a pagetoken.SecretStore in Redis, shared by every instance.
type Secrets struct{ conn }

func NewSecrets(rdb redis.UniversalClient, prefix string, timeout time.Duration) (*Secrets, error) {
	c, err := newConn(rdb, prefix, timeout)
	return &Secrets{conn: c}, err
}

// PageTokenSecret reads the secret (for a read-only Redis), else makes it with SET NX GET.
func (s *Secrets) PageTokenSecret(ctx context.Context) ([]byte, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	kept, err := s.rdb.Get(ctx, s.k.pageTokenSecret).Result()
	if errors.Is(err, redis.Nil) {
		fresh := make([]byte, pagetoken.MinSecretLen)
		rand.Read(fresh) // never fails (crypto/rand)
		if kept, err = s.rdb.SetArgs(ctx, s.k.pageTokenSecret, fresh, redis.SetArgs{Mode: "NX", Get: true}).Result(); errors.Is(err, redis.Nil) {
			return fresh, nil // ours was kept
		}
	}
	if err != nil {
		return nil, fmt.Errorf("page-token secret %s: %w", s.k.pageTokenSecret, classify(ctx, err))
	}
	if len(kept) < pagetoken.MinSecretLen {
		return nil, fmt.Errorf("%w: page-token secret %s: %d bytes, want at least %d",
			order.ErrCorrupt, s.k.pageTokenSecret, len(kept), pagetoken.MinSecretLen)
	}
	return []byte(kept), nil
}

// LimiterOptions configure a Limiter.
type LimiterOptions struct {
	Prefix     string           // starts every key; see docs/redis-layout.md
	Timeout    time.Duration    // bounds each decision's round trip
	Clock      func() time.Time // time.Now when nil; rate.lua never moves a window backwards
	Ban        ratelimit.BanPolicy
	Fallback   ratelimit.Limiter // decides while Redis is out; nil: order.ErrUnavailable
	RetryEvery time.Duration     // Redis is left alone after a failure (default a second)
	OnFallback func()            // called for every decision of the fallback
	Logger     *slog.Logger
}

// Limiter is a ratelimit.Limiter shared by every instance: the decisions in flight go in one
// pipeline at a time, a rate.lua call per caller.
type Limiter struct {
	conn
	bans      *ratelimit.Bans // the bans Redis decided, answered here until they end
	o         LimiterOptions
	downUntil atomic.Int64 // Unix ns; Redis is not tried before then
	down      atomic.Bool
	mu        sync.Mutex
	queue     []*decision
	flushing  bool // a goroutine is sending the queue
}

// decision is one request's rate decision, queued; what follows done is set before it closes.
type decision struct {
	rateCall
	ctx      context.Context
	due      time.Time // queued + timeout: a decision still queued then fails
	now      int64     // Unix ms
	trip     *trip     // reads the versions with the decision; nil for none
	done     chan struct{}
	outcome  []int64 // rate.lua's six numbers
	err      error
	versions [2]*redis.SliceCmd // the orders' and the keys', read with it
}

// rateCall is what the decisions of one rate.lua call of a pipeline share.
type rateCall struct {
	key  string   // the caller's hash
	args [5]int64 // rate.lua's first: per minute, per day, ban after, ban for (ms), peek
}

// NewLimiter returns a limiter on rdb.
func NewLimiter(rdb redis.UniversalClient, o LimiterOptions) (*Limiter, error) {
	c, err := newConn(rdb, o.Prefix, o.Timeout)
	o.RetryEvery = cmp.Or(max(o.RetryEvery, 0), time.Second)
	if o.Clock == nil {
		o.Clock = time.Now
	}
	o.Logger = cmp.Or(o.Logger, discard)
	return &Limiter{conn: c, bans: ratelimit.NewBans(10_000), o: o}, err
}

// Allow runs rate.lua for caller (with a order.Trip's reads); only an outage, never a hang-up, falls back.
func (l *Limiter) Allow(ctx context.Context, caller string, limits order.Limits) (ratelimit.Decision, error) {
	return l.decide(ctx, caller, limits, 0)
}

// Peek is Allow counting nothing: rate.lua decides as it would, and writes nothing.
func (l *Limiter) Peek(ctx context.Context, caller string, limits order.Limits) (ratelimit.Decision, error) {
	return l.decide(ctx, caller, limits, 1)
}

func (l *Limiter) decide(ctx context.Context, caller string, limits order.Limits, peek int64) (ratelimit.Decision, error) {
	if err := ctx.Err(); err != nil {
		return ratelimit.Decision{}, err
	}
	now := l.o.Clock()
	if d, ok := l.bans.Decision(caller, limits, now); ok {
		return d, nil
	}
	if l.o.Fallback != nil && now.UnixNano() < l.downUntil.Load() {
		return l.fallback(ctx, caller, limits, peek)
	}
	d := &decision{ctx: ctx, due: time.Now().Add(l.timeout), now: now.UnixMilli(), done: make(chan struct{}), rateCall: rateCall{
		l.k.rateLimit(caller), [5]int64{limits.PerMinute, limits.PerDay, l.o.Ban.After, l.o.Ban.For.Milliseconds(), peek}}}
	if t := tripOf(ctx, l.k.prefix); t != nil && !t.read {
		d.trip = t
	}
	l.mu.Lock()
	if l.queue = append(l.queue, d); !l.flushing {
		l.flushing = true
		go l.flush()
	}
	l.mu.Unlock()
	select {
	case <-d.done:
	case <-ctx.Done():
		return ratelimit.Decision{}, ctx.Err()
	}
	switch err := classify(ctx, d.err); {
	case err != nil && !errors.Is(err, order.ErrUnavailable):
		return ratelimit.Decision{}, fmt.Errorf("rate.lua: %w", err)
	case err != nil && l.o.Fallback == nil:
		return ratelimit.Decision{}, err
	case err != nil: // an outage: the fallback decides for RetryEvery
		l.downUntil.Store(l.o.Clock().Add(l.o.RetryEvery).UnixNano())
		if l.down.CompareAndSwap(false, true) {
			l.o.Logger.Warn("rate limiter: redis unavailable; each instance limits on its own until it answers",
				slog.String("error", err.Error()))
		}
		return l.fallback(ctx, caller, limits, peek)
	case l.down.CompareAndSwap(true, false):
		l.o.Logger.Info("rate limiter: redis answers again; limits are shared again")
	}
	if d.trip != nil && d.versions[0] != nil { // the round trip read them: keep them if both parse
		o, _, oerr := version(d.versions[0].Val())
		k, _, kerr := version(d.versions[1].Val())
		if oerr == nil && kerr == nil {
			d.trip.read, d.trip.orders, d.trip.keys = true, o, k
		}
	}
	res := d.outcome
	o := ratelimit.Outcome{Admitted: res[0] == 1, MinuteCount: res[1], DayCount: res[2],
		MinuteEnd: time.Unix((res[4]+1)*60, 0).UTC(), DayEnd: time.Unix((res[5]+1)*86400, 0).UTC()}
	if res[3] > 0 {
		o.BannedUntil = time.UnixMilli(res[3])
		l.bans.Remember(caller, limits, o, now)
	}
	return ratelimit.Decide(o, limits, now), nil
}

// flush sends the queue, a pipeline at a time, until it is empty.
func (l *Limiter) flush() {
	for l.mu.Lock(); len(l.queue) > 0; l.mu.Lock() {
		q := l.queue[:min(len(l.queue), 128)]
		l.queue = l.queue[len(q):]
		l.mu.Unlock()
		l.send(q)
	}
	l.queue, l.flushing = nil, false
	l.mu.Unlock()
}

// send decides q's decisions still waiting and not past due in one pipeline, due with the
// earliest: a rate.lua call for each caller and arguments, and one read of the versions.
func (l *Limiter) send(q []*decision) {
	calls := map[rateCall][]*decision{}
	due, withTrip := time.Time{}, false
	for _, d := range q {
		if d.ctx.Err() != nil {
			continue
		} else if !time.Now().Before(d.due) {
			d.err = errCallTimeout // queued behind a pipeline in flight
			continue
		}
		calls[d.rateCall] = append(calls[d.rateCall], d)
		if withTrip = withTrip || d.trip != nil; due.IsZero() || d.due.Before(due) {
			due = d.due
		}
	}
	ctx, cancel := context.WithDeadlineCause(context.Background(), due, errCallTimeout)
	defer cancel()
	cmds, versions := map[rateCall]*redis.Cmd{}, [2]*redis.SliceCmd{}
	_, err := l.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for c, ds := range calls {
			args := []any{c.args[0], c.args[1], c.args[2], c.args[3], c.args[4]}
			for _, d := range ds {
				args = append(args, strconv.FormatInt(d.now, 10))
			}
			cmds[c] = rateScript.EvalSha(ctx, onceScripter{process: p.Process}, []string{c.key}, args...)
		}
		if withTrip {
			versions = [2]*redis.SliceCmd{p.MGet(ctx, l.k.ordersVersion...), p.MGet(ctx, l.k.keysVersion...)}
		}
		return nil
	})
	for c, ds := range calls {
		cmd := cmds[c]
		if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") { // it did not run: again, with the source
			cmd = rateScript.Eval(ctx, onceScripter{process: l.rdb.Process}, []string{c.key}, cmd.Args()[4:]...)
		} else if cmd.Err() == nil && cmd.Val() == nil {
			cmd.SetErr(err) // the pipeline failed before any reply (WRONGPASS)
		}
		res, rerr := cmd.Int64Slice()
		for j, d := range ds {
			if d.err = rerr; rerr == nil {
				d.outcome = res[6*j : 6*j+6]
			}
			d.versions = versions
		}
	}
	for _, d := range q {
		close(d.done)
	}
}

func (l *Limiter) fallback(ctx context.Context, caller string, limits order.Limits, peek int64) (ratelimit.Decision, error) {
	if peek == 1 {
		return l.o.Fallback.Peek(ctx, caller, limits)
	} else if l.o.OnFallback != nil {
		l.o.OnFallback()
	}
	return l.o.Fallback.Allow(ctx, caller, limits)
}

// Ready makes one rate-limit decision: a Redis out of memory, read-only or busy answers PING.
func Ready(ctx context.Context, rdb redis.UniversalClient, prefix string, timeout time.Duration) error {
	l, err := NewLimiter(rdb, LimiterOptions{Prefix: prefix, Timeout: timeout})
	if err == nil {
		_, err = l.Allow(ctx, "ready:probe", order.Limits{PerMinute: 1 << 50, PerDay: 1 << 50})
	}
	return err
}
