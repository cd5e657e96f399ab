package redisstore

import (
	"cmp"
	"context"
	"embed"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
)

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
	prefix                                                                  string
	ordersData, ordersStatus, ordersVersion, ordersGeneration, ordersEvents string
	petsData, pageTokenSecret, webhookIDs                                   string
	keysByHash, keysByName, keysVersion, keysGeneration                     string
	orders, keys                                                            []string // the writes' KEYS
}

// validPrefix keeps key names free of braces, spaces and anything a client could inject.
var validPrefix = regexp.MustCompile(`^[A-Za-z0-9_:.-]{1,64}$`)

// DefaultPrefix starts every key of the service.
const DefaultPrefix = "orderd"

func newNames(prefix string) (names, error) {
	if !validPrefix.MatchString(prefix) {
		return names{}, fmt.Errorf("redis key prefix %q: want 1 to 64 of A-Z a-z 0-9 _ : . -", prefix)
	}
	orders, keys := "{"+prefix+":orders}", "{"+prefix+":keys}"
	n := names{
		prefix:     prefix,
		ordersData: orders + ":data", ordersStatus: orders + ":status", ordersVersion: orders + ":version",
		ordersGeneration: orders + ":generation", ordersEvents: orders + ":events",
		petsData:        "{" + prefix + ":pets}:data",
		pageTokenSecret: "{" + prefix + ":settings}:page-token-secret",
		webhookIDs:      "{" + prefix + ":webhooks}:ids",
		keysByHash:      keys + ":by-hash", keysByName: keys + ":by-name", keysVersion: keys + ":version",
		keysGeneration: keys + ":generation",
	}
	n.orders = []string{n.ordersData, n.ordersStatus, n.ordersVersion, n.ordersGeneration, n.ordersEvents}
	n.keys = []string{n.keysByName, n.keysByHash, n.keysVersion, n.keysGeneration}
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
	cmd := script.Run(ctx, c.once(), keys, args...)
	return cmd, classify(ctx, cmd.Err())
}

// sentOnce is a command never sent again: it may have run (docs/redis-layout.md).
type sentOnce struct{ redis.Cmder }

func (sentOnce) NoRetry() bool { return true }

// once is c's client for the scripts that write alone: each EVALSHA and EVAL sent once.
func (c conn) once() redis.Scripter { return onceScripter{rdb: c.rdb} }

type onceScripter struct {
	redis.Scripter // nil: a Script's Run and Eval use only the two methods below
	rdb            redis.UniversalClient
}

func (o onceScripter) Eval(ctx context.Context, src string, keys []string, args ...any) *redis.Cmd {
	return o.send(ctx, "eval", src, keys, args)
}
func (o onceScripter) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	return o.send(ctx, "evalsha", sha, keys, args)
}

func (o onceScripter) send(ctx context.Context, name, script string, keys []string, args []any) *redis.Cmd {
	cmd := scriptCmd(ctx, name, script, keys, args)
	_ = o.rdb.Process(ctx, sentOnce{cmd}) // its error is cmd's
	return cmd
}

// scriptCmd is an EVAL or EVALSHA (name) of script (source or hash), not sent.
func scriptCmd(ctx context.Context, name, script string, keys []string, args []any) *redis.Cmd {
	cmdArgs := append(make([]any, 0, 3+len(keys)+len(args)), name, script, len(keys))
	for _, k := range keys {
		cmdArgs = append(cmdArgs, k)
	}
	return redis.NewCmd(ctx, append(cmdArgs, args...)...)
}

// errCallTimeout is the cause of a call's context that our own bound ended.
var errCallTimeout = errors.New("redis did not answer within the call timeout")

// classify wraps an outage in order.ErrUnavailable (never a context error), WRONGTYPE in
// order.ErrCorrupt, and returns the request's own end as its context error.
func classify(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, order.ErrUnavailable) || errors.Is(err, order.ErrCorrupt) {
		return err
	}
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, errCallTimeout) {
		return ctx.Err()
	}
	var reply redis.Error
	if !errors.As(err, &reply) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			// Our bound ended the call: keep the context error out of the chain.
			return fmt.Errorf("%w: redis: %w (%v)", order.ErrUnavailable, errCallTimeout, err)
		}
		return fmt.Errorf("%w: redis: %w", order.ErrUnavailable, err)
	}
	msg := reply.Error()
	if _, reason, ok := strings.Cut(msg, "EXECABORT Transaction discarded because of: "); ok {
		msg = reason // judge why Redis refused the transaction
	}
	if strings.HasPrefix(msg, "ERR max number of clients reached") {
		msg = "MAXCLIENTS" // about the server
	}
	switch code, _, _ := strings.Cut(msg, " "); code {
	// States of the server or the deployment (NOPERM: the ACL user's rights), not of a request;
	// an error raised by redis.call in a script keeps its code, one of the script itself is ERR.
	case "LOADING", "BUSY", "OOM", "MISCONF", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN",
		"NOREPLICAS", "NOPERM", "NOAUTH", "WRONGPASS", "DENIED", "UNKILLABLE", "MAXCLIENTS":
		return fmt.Errorf("%w: redis: %w", order.ErrUnavailable, err)
	case "WRONGTYPE":
		return fmt.Errorf("%w: redis: %w", order.ErrCorrupt, err)
	}
	return fmt.Errorf("redis: %w", err)
}
