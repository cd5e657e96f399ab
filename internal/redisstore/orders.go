package redisstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/store"
)

var _ order.Store = (*Orders)(nil)

// Orders is an order.Store in Redis (docs/redis-layout.md).
type Orders struct {
	conn
	halves     halfRecords
	afterChunk func() // after each round trip of Load's read; tests change the orders there
}

// NewOrders returns the store of the deployment whose keys start with prefix.
func NewOrders(rdb redis.UniversalClient, prefix string, timeout time.Duration) (*Orders, error) {
	c, err := newConn(rdb, prefix, timeout)
	return &Orders{conn: c, halves: halfRecords{logged: map[string]bool{}}}, err
}

// LogTo sends the reports of records the store cannot serve to log, not SetLogger's.
func (s *Orders) LogTo(log *slog.Logger) { s.halves.log.Store(log) }

// Load reads the log's newest position, then the orders a chunk at a time through the ids
// index, each round trip HMGET of both hashes for one chunk's ids and ZRANGEBYLEX of the next
// chunk, so that no call holds Redis long from the other requests of every instance. A change
// made while it reads has its event after the position: the View applies it after the load.
// A half-written order is absent, and reported.
func (s *Orders) Load(ctx context.Context, add func(order.Order)) (order.Mark, error) {
	position, err := s.events().LastEventID(ctx)
	if err != nil {
		return order.Mark{}, err
	}
	ctx, stop := context.WithCancel(ctx) // a failed stage stops the other
	defer stop()
	chunks := make(chan listedChunk, 4)
	var decodeErr error
	done := make(chan struct{})
	go func() { // decodes each chunk while the next is read
		defer close(done)
		for c := range chunks {
			for i, id := range c.ids {
				o, ok, err := s.whole(c.fields[i], c.data[i], c.statuses[i])
				if err != nil && decodeErr == nil {
					decodeErr = fmt.Errorf("order %d: %w", id, err)
					stop()
				}
				if ok && decodeErr == nil {
					add(o)
				}
			}
		}
	}()
	err = s.readChunks(ctx, chunks)
	close(chunks)
	<-done
	if err = cmp.Or(decodeErr, err); err != nil {
		return order.Mark{}, err
	}
	return order.Mark{Position: position}, nil
}

// Since reads the log after m.
func (s *Orders) Since(ctx context.Context, m order.Mark, limit int) ([]order.Event, order.Mark, bool, error) {
	page, err := s.events().Events(ctx, order.EventQuery{After: m.Position, Limit: limit})
	if err != nil {
		return nil, m, false, err
	}
	m.Position = page.Last
	return page.Events, m, page.More, nil
}

// events is the log of the same deployment.
func (s *Orders) events() *Events { return &Events{conn: s.conn} }

// idsOf reads index members: each an id in decimal, zero-padded to 19 digits. fields are the
// ids as the hashes name them, without the zeros.
func idsOf(members []string) (ids []int64, fields []string, err error) {
	ids, fields = make([]int64, len(members)), make([]string, len(members))
	for i, m := range members {
		id, err := strconv.ParseInt(m, 10, 64)
		if err != nil || len(m) != 19 || m[0] < '0' || m[0] > '9' {
			return nil, nil, fmt.Errorf("%w: index member %q", errBadRecord, m)
		}
		ids[i], fields[i] = id, strconv.FormatInt(id, 10)
	}
	return ids, fields, nil
}

// listChunk is the orders one round trip of Load reads: half a millisecond of Redis a command.
var listChunk int64 = 1000

// listedChunk is a chunk of the ids index and what HMGET read of both hashes for it.
type listedChunk struct {
	ids            []int64
	fields         []string
	data, statuses []string // "" where a field is missing
}

// readChunks sends the index, listChunk members at a time, and both halves of their orders
// to chunks, in id order.
func (s *Orders) readChunks(ctx context.Context, chunks chan<- listedChunk) error {
	var c listedChunk
	after := "-"
	for {
		cctx, cancel := callContext(ctx, s.timeout)
		pipe := s.rdb.Pipeline()
		var data, statuses *redis.StringSliceCmd
		if len(c.fields) > 0 {
			data, statuses = hmget(cctx, pipe, s.k.ordersData, c.fields), hmget(cctx, pipe, s.k.ordersStatus, c.fields)
		}
		var next *redis.StringSliceCmd
		if after != "" {
			next = pipe.ZRangeByLex(cctx, s.k.ordersIDs, &redis.ZRangeBy{Min: after, Max: "+", Count: listChunk})
		}
		_, err := pipe.Exec(cctx)
		err = classify(cctx, err)
		cancel()
		if err != nil {
			return err
		}
		if s.afterChunk != nil {
			s.afterChunk()
		}
		if data != nil {
			c.data, c.statuses = data.Val(), statuses.Val()
			chunks <- c
		}
		if next == nil {
			return nil
		}
		members := next.Val()
		if c.ids, c.fields, err = idsOf(members); err != nil {
			return err
		}
		switch {
		case len(members) == 0:
			return nil
		case int64(len(members)) < listChunk:
			after = "" // the last chunk: no range after it
		default:
			after = "(" + members[len(members)-1]
		}
	}
}

// hmget queues HMGET of fields, read as strings with "" for a missing field: go-redis's HMGet
// puts each value in an interface, an allocation per field (8% of a list's build).
func hmget(ctx context.Context, pipe redis.Pipeliner, key string, fields []string) *redis.StringSliceCmd {
	args := make([]any, 0, 2+len(fields))
	args = append(args, "hmget", key)
	for _, f := range fields {
		args = append(args, f)
	}
	cmd := redis.NewStringSliceCmd(ctx, args...)
	_ = pipe.Process(ctx, cmd) // queued: its error comes with Exec's
	return cmd
}

// Version is the orders' version read in the request's round trip, or else read now.
func (s *Orders) Version(ctx context.Context) (uint64, error) {
	if c := carriedOf(ctx, s.k.prefix); c != nil && c.read {
		return c.orders.id(), nil
	}
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	vals, err := s.rdb.MGet(ctx, s.k.ordersVersion, s.k.ordersGeneration).Result()
	if err != nil {
		return 0, classify(ctx, err)
	}
	v, err := parseVersion(vals)
	if errors.Is(err, errNoGeneration) {
		// Redis lost it, and nothing has written since: one for this read only.
		v.generation, err = "unset:"+newGeneration(), nil
	}
	if err != nil {
		return 0, classify(ctx, err)
	}
	return v.id(), nil
}

// Cancel runs cancel.lua: pending becomes cancelled, in one step for every instance.
func (s *Orders) Cancel(ctx context.Context, id int64) (order.Order, bool, error) {
	field := strconv.FormatInt(id, 10)
	res, err := s.batch.runScript(ctx, cancelScript, []string{s.k.ordersStatus, s.k.ordersVersion, s.k.ordersData, s.k.ordersGeneration,
		s.k.ordersByStatus[order.StatusPending], s.k.ordersByStatus[order.StatusCancelled], s.k.ordersEvents},
		field, newGeneration(), member(id)).Slice()
	if err != nil {
		return order.Order{}, false, classify(ctx, err)
	}
	outcome, _ := res[0].(string)
	data, _ := res[1].(string)
	switch outcome {
	case "no-data", "no-status":
		s.halves.report(field, outcome == "no-status")
		fallthrough
	case "missing":
		return order.Order{}, false, order.ErrNotFound
	case "cancelled", "already-cancelled":
		o, err := decodeOrder(field, data, string(order.StatusCancelled))
		return o, outcome == "cancelled", err
	case string(order.StatusShipped):
		o, err := decodeOrder(field, data, outcome)
		if err != nil {
			return o, false, err
		}
		return o, false, order.ErrAlreadyShipped
	}
	return order.Order{}, false, fmt.Errorf("%w: order %s has status %q", errBadRecord, field, outcome)
}

// importChunk is how many orders one import.lua (or ids one reindex.lua) has; a batch
// sends several in one pipeline, which Redis runs while the next batch is read.
const importChunk = 1000

// Import loads orders with import.lua in batches, returns how many fields changed, and reindexes.
func (s *Orders) Import(ctx context.Context, orders []order.Order) (int64, error) {
	if err := order.ValidateAll(orders); err != nil {
		return 0, err
	}
	return s.ImportBatches(ctx, order.Slice(orders, 8*importChunk))
}

// ImportBatches is Import of orders read in batches, each checked as it is read (by
// order.CheckEach): the batch of a refused order and those after it are not written.
func (s *Orders) ImportBatches(ctx context.Context, orders order.Batches[order.Order]) (int64, error) {
	keys := append([]string{s.k.ordersData, s.k.ordersStatus, s.k.ordersVersion, s.k.ordersGeneration, s.k.ordersIDs}, s.k.statusSets()...)
	keys = append(keys, s.k.ordersEvents)
	calls := newInFlight(importPipelines)
	var imported order.IDSet // indexed by import.lua: Reindex passes them by
	err := orders(order.CheckEach[order.Order](), func(batch []order.Order) error {
		for _, o := range batch {
			imported.Add(o.ID)
		}
		var chunks [][]any
		var buf []byte
		for part := range slices.Chunk(batch, importChunk) {
			args := make([]any, 0, 1+4*len(part))
			args = append(args, newGeneration())
			for _, o := range part {
				buf = appendData(buf[:0], orderData{o.PetID, o.Quantity, o.ShipDate, o.Complete})
				args = append(args, strconv.FormatInt(o.ID, 10), member(o.ID), string(buf), string(o.Status))
			}
			chunks = append(chunks, args)
		}
		return calls.run(func() (int64, error) { return s.runScripts(ctx, importScript, keys, chunks) })
	})
	changed, callErr := calls.wait()
	if err = cmp.Or(err, callErr); err != nil {
		return changed, err
	}
	// When the status hash holds the file's orders only, there is nothing else to reindex.
	callCtx, cancel := callContext(ctx, s.timeout)
	held, err := s.rdb.HLen(callCtx, s.k.ordersStatus).Result()
	err = classify(callCtx, err)
	cancel()
	if err == nil && held != int64(imported.Len()) {
		_, err = s.reindex(ctx, imported.Has)
	}
	if err != nil {
		return changed, fmt.Errorf("orders imported, indexes not rebuilt: %w", err)
	}
	return changed, nil
}

// importPipelines is how many pipelines of import.lua or reindex.lua are in flight at once.
const importPipelines = 2

// reindexScan is how many fields an HSCAN of Reindex asks for: several reindex.lua's worth.
const reindexScan = 8 * importChunk

// Reindex indexes every order by status and returns how many entries moved; no order changes.
// The ids of each HSCAN go to reindex.lua in a pipeline of their own while the next HSCAN runs.
func (s *Orders) Reindex(ctx context.Context) (int64, error) {
	return s.reindex(ctx, func(int64) bool { return false })
}

// reindex is Reindex of the orders whose ids skip refuses.
func (s *Orders) reindex(ctx context.Context, skip func(int64) bool) (int64, error) {
	keys := append([]string{s.k.ordersStatus, s.k.ordersIDs}, s.k.statusSets()...)
	keys = append(keys, s.k.ordersVersion, s.k.ordersGeneration)
	calls := newInFlight(importPipelines)
	var cursor uint64
	var err error
	for first := true; err == nil && (first || cursor != 0); first = false {
		callCtx, cancel := callContext(ctx, s.timeout)
		var fields []string
		fields, cursor, err = s.rdb.HScan(callCtx, s.k.ordersStatus, cursor, "", reindexScan).Result()
		err = classify(callCtx, err) // before cancel, which would make any error look like the caller's
		cancel()
		var args []any
		for i := 0; err == nil && i+1 < len(fields); i += 2 {
			if id, err := strconv.ParseInt(fields[i], 10, 64); err == nil && id >= 0 && !skip(id) {
				args = append(args, fields[i], member(id)) // others are no order: never listed
			}
		}
		if len(args) > 0 {
			var chunks [][]any
			for chunk := range slices.Chunk(args, 2*importChunk) {
				chunks = append(chunks, append([]any{newGeneration()}, chunk...))
			}
			err = calls.run(func() (int64, error) { return s.runScripts(ctx, reindexScript, keys, chunks) })
		}
	}
	moved, callErr := calls.wait()
	return moved, cmp.Or(err, callErr)
}

// errBadRecord is data that another writer left in a form the layout does not allow.
var errBadRecord = fmt.Errorf("%w: bad order record in redis", store.ErrCorrupt)

func decodeOrder(field, data, status string) (order.Order, error) {
	id, err := strconv.ParseInt(field, 10, 64)
	if err != nil {
		return order.Order{}, fmt.Errorf("%w: id %q", errBadRecord, field)
	}
	d, err := decodeData(data)
	if err != nil {
		return order.Order{}, fmt.Errorf("%w: order %d: %v", errBadRecord, id, err)
	}
	o := order.Order{ID: id, PetID: d.PetID, Quantity: d.Quantity, ShipDate: d.ShipDate, Complete: d.Complete, Status: order.Status(status)}
	if err := o.Validate(); err != nil {
		return order.Order{}, fmt.Errorf("%w: %v", errBadRecord, err)
	}
	return o, nil
}

// whole decodes an order from its halves, "" where one is missing (or empty, which the layout
// counts as missing); ok is false without both (one alone is reported).
func (s *Orders) whole(field, data, status string) (o order.Order, ok bool, err error) {
	if data == "" || status == "" {
		if data != "" || status != "" {
			s.halves.report(field, data != "")
		}
		return o, false, nil
	}
	o, err = decodeOrder(field, data, status)
	return o, err == nil, err
}

// halfRecords reports orders another system left half-written: each once, up to a limit.
type halfRecords struct {
	log    atomic.Pointer[slog.Logger]
	mu     sync.Mutex
	logged map[string]bool
}

const maxHalfRecords = 1000

func (h *halfRecords) report(field string, hasData bool) {
	h.mu.Lock()
	defer h.mu.Unlock() // rare: at most maxHalfRecords times
	if h.logged[field] || len(h.logged) == maxHalfRecords {
		return
	}
	h.logged[field] = true
	log := cmp.Or(h.log.Load(), packageLogger())
	missing := "data"
	if hasData {
		missing = "status"
	}
	log.Warn("order in redis is half-written, so it is neither listed nor cancelled",
		slog.String("order", field), slog.String("missing", missing))
	if len(h.logged) == maxHalfRecords {
		log.Warn("more half-written orders are not logged", slog.Int("logged", maxHalfRecords))
	}
}
