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

// Load reads the log's newest position, then the orders a chunk at a time, so that no call
// holds Redis long from the other requests of every instance: HSCAN of the status hash, and
// HMGET of the data of each chunk while the next is scanned. A change made while it reads has
// its event after the position: the View applies it after the load. HSCAN returns every field
// held throughout the scan (orders are never deleted), but in no order and perhaps twice: Load
// sorts them and keeps one of each. A half-written order is absent, and reported when it has a
// status.
func (s *Orders) Load(ctx context.Context, add func(order.Order)) (order.Mark, error) {
	position, err := s.events().LastEventID(ctx)
	if err != nil {
		return order.Mark{}, err
	}
	ctx, stop := context.WithCancelCause(ctx) // a stage that fails stops the others
	defer stop(nil)
	scanned, read := make(chan listedChunk, 4), make(chan listedChunk, 4)
	var orders []order.Order
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(read)
		for c := range scanned {
			if err := s.readData(ctx, &c); err != nil {
				stop(err)
			} else {
				read <- c
			}
		}
	})
	wg.Go(func() { // decodes each chunk while the next is read
		for c := range read {
			if orders == nil {
				orders = make([]order.Order, 0, c.held) // no copy as it grows
			}
			for i, field := range c.fields {
				o, ok, err := s.whole(field, c.data[i], c.statuses[i])
				if err != nil {
					stop(err)
				} else if ok {
					orders = append(orders, o)
				}
			}
		}
	})
	if err := s.scan(ctx, scanned); err != nil {
		stop(err)
	}
	close(scanned)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return order.Mark{}, err
	}
	ids := make([]idAt, len(orders))
	for i, o := range orders {
		ids[i] = idAt{uint64(o.ID), i} // never negative: decodeOrder refuses those
	}
	ids = sortByID(ids)
	for i, k := range ids {
		if i == 0 || k.id != ids[i-1].id {
			add(orders[k.at])
		}
	}
	return order.Mark{Position: position}, nil
}

// idAt is an order's id and its place in Load's orders.
type idAt struct {
	id uint64
	at int
}

// sortByID sorts ids by id, 16 bits a pass from the lowest, passing over the bits every id
// shares (the high ones, mostly): for a million, 30 ms where slices.SortFunc takes 140 (and
// sorting the orders themselves, 860).
func sortByID(ids []idAt) []idAt {
	sorted := make([]idAt, len(ids))
	for shift := 0; shift < 64 && len(ids) > 0; shift += 16 {
		var at [1 << 16]int
		for _, k := range ids {
			at[k.id>>shift&0xffff]++
		}
		if at[ids[0].id>>shift&0xffff] == len(ids) {
			continue
		}
		for d, sum := 0, 0; d < len(at); d++ {
			at[d], sum = sum, sum+at[d]
		}
		for _, k := range ids {
			d := k.id >> shift & 0xffff
			sorted[at[d]] = k
			at[d]++
		}
		ids, sorted = sorted, ids
	}
	return ids
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

// listChunk is the fields one HSCAN of Load asks for. An HSCAN's time in Redis, and its
// chunk's HMGET's, is their fields' (about 0.7 µs each at a million orders, whatever the
// COUNT), so a small chunk costs a load no Redis time, and keeps each command near 0.4 ms.
var listChunk int64 = 500

// listedChunk is what an HSCAN read of the status hash, and HMGET of the data hash for it.
type listedChunk struct {
	held                   int // the status hash's fields (HLEN) when the scan began
	fields, statuses, data []string
}

// scan sends the status hash to scanned, about listChunk fields a call.
func (s *Orders) scan(ctx context.Context, scanned chan<- listedChunk) error {
	cctx, cancel := callContext(ctx, s.timeout)
	held, err := s.rdb.HLen(cctx, s.k.ordersStatus).Result()
	err = classify(cctx, err)
	cancel()
	var cursor uint64
	for first := true; err == nil && (first || cursor != 0); first = false {
		cctx, cancel := callContext(ctx, s.timeout)
		var pairs []string
		pairs, cursor, err = s.rdb.HScan(cctx, s.k.ordersStatus, cursor, "", listChunk).Result()
		err = classify(cctx, err)
		cancel()
		if s.afterChunk != nil {
			s.afterChunk()
		}
		c := listedChunk{held: int(held), fields: make([]string, 0, len(pairs)/2), statuses: make([]string, 0, len(pairs)/2)}
		for i := 0; i+1 < len(pairs); i += 2 {
			c.fields, c.statuses = append(c.fields, pairs[i]), append(c.statuses, pairs[i+1])
		}
		if len(c.fields) > 0 {
			scanned <- c
		}
	}
	return err
}

// readData reads the data of c's fields with HMGET, as strings with "" for a missing field:
// go-redis's HMGet puts each value in an interface, an allocation per field (8% of a load).
func (s *Orders) readData(ctx context.Context, c *listedChunk) error {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	args := make([]any, 0, 2+len(c.fields))
	args = append(args, "hmget", s.k.ordersData)
	for _, f := range c.fields {
		args = append(args, f)
	}
	cmd := redis.NewStringSliceCmd(ctx, args...)
	_ = s.rdb.Process(ctx, cmd)
	c.data = cmd.Val()
	return classify(ctx, cmd.Err())
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
var errBadRecord = fmt.Errorf("%w: bad order record in redis", store.ErrCorrupt)

func decodeOrder(field, data, status string) (order.Order, error) {
	id, err := strconv.ParseInt(field, 10, 64)
	if err != nil || field[0] == '+' || field[0] == '-' || field[0] == '0' && field != "0" { // another spelling is another field
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
