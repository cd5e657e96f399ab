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
)

var _ order.Store = (*Orders)(nil)

// Orders is an order.Store in Redis (docs/redis-layout.md).
type Orders struct {
	conn
	halves     halfRecords
	afterChunk func() // after each HSCAN of Load; tests change the orders there
}

// NewOrders returns the store of the deployment whose keys start with prefix.
func NewOrders(rdb redis.UniversalClient, prefix string, timeout time.Duration) (*Orders, error) {
	c, err := newConn(rdb, prefix, timeout)
	return &Orders{conn: c, halves: halfRecords{logged: map[string]bool{}}}, err
}

// LogTo sends the reports of records the store cannot serve to log, not SetLogger's.
func (s *Orders) LogTo(log *slog.Logger) { s.halves.log.Store(log) }

// Load reads the log's newest position, then the orders a chunk at a time, so that no call
// holds Redis long from the other requests of every instance: the status hash with HSCAN,
// then the data of its fields in id order with HMGET, each chunk decoded and given to add
// while the next is read. HSCAN returns every field held throughout the scan (orders are never
// deleted), in no order and perhaps twice: Load sorts the fields and keeps one of each. A
// change made while it reads has its event after the position: the View applies it after the
// load. A half-written order is absent, and reported when it has a status.
func (s *Orders) Load(ctx context.Context, add func(order.Order)) (order.Mark, error) {
	position, err := s.events().LastEventID(ctx)
	if err != nil {
		return order.Mark{}, err
	}
	held, err := s.scanStatuses(ctx)
	if err != nil {
		return order.Mark{}, err
	}
	ctx, stop := context.WithCancelCause(ctx) // a failed decode stops the reads
	defer stop(nil)
	chunks := make(chan []string, 4)
	go func() {
		defer close(chunks)
		for part := range slices.Chunk(held, dataChunks*int(listChunk)) {
			data, err := s.readData(ctx, part)
			if err != nil {
				stop(err)
				return
			}
			chunks <- data
		}
	}()
	at := 0
	for data := range chunks {
		for i, d := range data {
			if ctx.Err() != nil {
				break
			}
			o, ok, err := s.whole(int64(held[at+i].id), d, string(held[at+i].status))
			if err != nil {
				stop(err)
			} else if ok {
				add(o)
			}
		}
		at += len(data)
	}
	if err := context.Cause(ctx); err != nil {
		return order.Mark{}, err
	}
	return order.Mark{Position: position}, nil
}

// heldStatus is a field of the status hash: an order's id and its status.
type heldStatus struct {
	id     uint64
	status order.Status
}

// sortByID sorts held by id, 16 bits a pass from the lowest, passing over the bits every id
// shares (the high ones, mostly): for a million, a third of the time of slices.SortFunc.
func sortByID(held []heldStatus) []heldStatus {
	sorted := make([]heldStatus, len(held))
	for shift := 0; shift < 64 && len(held) > 0; shift += 16 {
		var at [1 << 16]int
		for _, h := range held {
			at[h.id>>shift&0xffff]++
		}
		if at[held[0].id>>shift&0xffff] == len(held) {
			continue
		}
		for d, sum := 0, 0; d < len(at); d++ {
			at[d], sum = sum, sum+at[d]
		}
		for _, h := range held {
			d := h.id >> shift & 0xffff
			sorted[at[d]] = h
			at[d]++
		}
		held, sorted = sorted, held
	}
	return held
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

// listChunk is the fields one HSCAN or HMGET of Load reads. Their time in Redis is their
// fields' (0.4 to 0.8 µs each at a million orders, whatever the COUNT), so a small chunk
// costs a load no Redis time, and keeps each command well under a millisecond.
var listChunk int64 = 500

// dataChunks is how many HMGETs of listChunk fields a round trip of Load sends: a round trip
// costs more than Redis's time for one.
const dataChunks = 4

// scanStatuses reads the status hash, about listChunk fields an HSCAN, and returns its fields
// sorted by id, once each.
func (s *Orders) scanStatuses(ctx context.Context) ([]heldStatus, error) {
	cctx, cancel := callContext(ctx, s.timeout)
	n, err := s.rdb.HLen(cctx, s.k.ordersStatus).Result()
	err = classify(cctx, err)
	cancel()
	if err != nil {
		return nil, err
	}
	held := make([]heldStatus, 0, n)
	var cursor uint64
	for first := true; first || cursor != 0; first = false {
		cctx, cancel := callContext(ctx, s.timeout)
		pairs, next, err := s.rdb.HScan(cctx, s.k.ordersStatus, cursor, "", listChunk).Result()
		err = classify(cctx, err)
		cancel()
		if err != nil {
			return nil, err
		}
		if s.afterChunk != nil {
			s.afterChunk()
		}
		for i := 0; i+1 < len(pairs); i += 2 {
			id, err := parseID(pairs[i])
			if err != nil {
				return nil, err
			}
			status := order.Status(pairs[i+1])
			for _, known := range [...]order.Status{order.StatusPending, order.StatusShipped, order.StatusCancelled} {
				if status == known {
					status = known // not the reply's string: a million fewer for the collector to mark
				}
			}
			held = append(held, heldStatus{uint64(id), status})
		}
		cursor = next
	}
	held = sortByID(held)
	return slices.CompactFunc(held, func(a, b heldStatus) bool { return a.id == b.id }), nil
}

// readData reads the data of held's fields in one round trip, with an HMGET of each listChunk
// of them, as strings with "" for a missing field: go-redis's HMGet puts each value in an
// interface, an allocation per field (8% of a load).
func (s *Orders) readData(ctx context.Context, held []heldStatus) ([]string, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	pipe := s.rdb.Pipeline()
	var cmds []*redis.StringSliceCmd
	for part := range slices.Chunk(held, int(listChunk)) {
		args := make([]any, 0, 2+len(part))
		args = append(args, "hmget", s.k.ordersData)
		for _, h := range part {
			args = append(args, strconv.FormatUint(h.id, 10))
		}
		cmds = append(cmds, redis.NewStringSliceCmd(ctx, args...))
		_ = pipe.Process(ctx, cmds[len(cmds)-1]) // queued: its error comes with Exec's
	}
	_, err := pipe.Exec(ctx)
	data := make([]string, 0, len(held))
	for _, cmd := range cmds {
		data = append(data, cmd.Val()...)
	}
	return data, classify(ctx, err)
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
		s.k.ordersEvents}, field, newGeneration()).Slice()
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

// importChunk is how many orders one import.lua has; a batch sends several in one pipeline,
// which Redis runs while the next batch is read.
const importChunk = 1000

// Import loads orders with import.lua in batches, and returns how many fields changed.
func (s *Orders) Import(ctx context.Context, orders []order.Order) (int64, error) {
	if err := order.ValidateAll(orders); err != nil {
		return 0, err
	}
	return s.ImportBatches(ctx, order.Slice(orders, 8*importChunk))
}

// ImportBatches is Import of orders read in batches, each checked as it is read (by
// order.CheckEach): the batch of a refused order and those after it are not written, nor
// are those after a batch that failed.
func (s *Orders) ImportBatches(ctx context.Context, orders order.Batches[order.Order]) (int64, error) {
	keys := []string{s.k.ordersData, s.k.ordersStatus, s.k.ordersVersion, s.k.ordersGeneration, s.k.ordersEvents}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	pipelines := make(chan [][]any)
	var changed int64
	done := make(chan struct{})
	go func() { // runs each batch's pipeline while the next batch is read and made
		defer close(done)
		for chunks := range pipelines {
			if ctx.Err() == nil {
				n, err := s.runScripts(ctx, importScript, keys, chunks)
				changed += n
				if err != nil {
					stop(err)
				}
			}
		}
	}()
	var buf []byte
	err := orders(order.CheckEach[order.Order](), func(batch []order.Order) error {
		var chunks [][]any
		for part := range slices.Chunk(batch, importChunk) {
			args := make([]any, 0, 1+3*len(part))
			args = append(args, newGeneration())
			for _, o := range part {
				buf = appendData(buf[:0], orderData{o.PetID, o.Quantity, o.ShipDate, o.Complete})
				args = append(args, strconv.FormatInt(o.ID, 10), string(buf), string(o.Status))
			}
			chunks = append(chunks, args)
		}
		select {
		case pipelines <- chunks:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	})
	close(pipelines)
	<-done
	return changed, cmp.Or(err, context.Cause(ctx))
}

// errBadRecord is data that another writer left in a form the layout does not allow.
var errBadRecord = fmt.Errorf("%w: bad order record in redis", order.ErrCorrupt)

// parseID reads an order's id from its field: in decimal as FormatInt writes it, since
// another spelling ("007", "+7") would be another field of the hashes.
func parseID(field string) (int64, error) {
	id, err := strconv.ParseInt(field, 10, 64)
	if err != nil || field[0] == '+' || field[0] == '-' || field[0] == '0' && field != "0" {
		return 0, fmt.Errorf("%w: id %q", errBadRecord, field)
	}
	return id, nil
}

func decodeOrder(field, data, status string) (order.Order, error) {
	id, err := parseID(field)
	if err != nil {
		return order.Order{}, err
	}
	return orderOf(id, data, status)
}

// orderOf decodes order id from its data and status.
func orderOf(id int64, data, status string) (order.Order, error) {
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
func (s *Orders) whole(id int64, data, status string) (o order.Order, ok bool, err error) {
	if data == "" || status == "" {
		if data != "" || status != "" {
			s.halves.report(strconv.FormatInt(id, 10), data != "")
		}
		return o, false, nil
	}
	o, err = orderOf(id, data, status)
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
