package redisstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
)

// Orders is an order.Store in Redis (docs/redis-layout.md).
type Orders struct {
	conn
	halves     sync.Map     // the half-written orders reported
	reported   atomic.Int32 // how many: the first thousand only
	afterChunk func()       // after each HSCAN of Load; tests change the orders there
}

func NewOrders(rdb redis.UniversalClient, prefix string, timeout time.Duration) (*Orders, error) {
	c, err := newConn(rdb, prefix, timeout)
	return &Orders{conn: c}, err
}

// listChunk is the fields of one HSCAN or HMGET of Load: each well under a millisecond in Redis.
var listChunk int64 = 500

// Load reads the log's newest position, then the orders a chunk at a time, so that no call holds
// Redis long. A change meanwhile has its event after the position.
func (s *Orders) Load(ctx context.Context, add func(order.Order)) (order.Mark, error) {
	position, err := (&Events{conn: s.conn}).LastEventID(ctx)
	var held []heldStatus
	for cursor, first := uint64(0), true; err == nil && (first || cursor != 0); first = false {
		var pairs []string
		cctx, cancel := callContext(ctx, s.timeout)
		pairs, cursor, err = s.rdb.HScan(cctx, s.k.ordersStatus, cursor, "", listChunk).Result()
		if err = classify(cctx, err); s.afterChunk != nil {
			s.afterChunk()
		}
		cancel()
		for i := 0; err == nil && i+1 < len(pairs); i += 2 {
			var id int64
			id, err = parseID(pairs[i])
			held = append(held, heldStatus{id, pairs[i+1]})
		}
	}
	if err != nil {
		return order.Mark{}, err
	}
	slices.SortFunc(held, func(a, b heldStatus) int { return cmp.Compare(a.id, b.id) })
	held = slices.CompactFunc(held, func(a, b heldStatus) bool { return a.id == b.id })
	ctx, stop := context.WithCancelCause(ctx) // a failed decode stops the reads
	defer stop(nil)
	reads := make(chan []string, 16)
	go func() { // four HMGETs a round trip, as strings: HMGet's interface values cost an allocation each
		defer close(reads)
		for part := range slices.Chunk(held, 4*int(listChunk)) {
			cctx, cancel := callContext(ctx, s.timeout)
			p, cmds := s.rdb.Pipeline(), []*redis.StringSliceCmd{}
			for part := range slices.Chunk(part, int(listChunk)) {
				args := append(make([]any, 0, 2+len(part)), "hmget", s.k.ordersData)
				for _, h := range part {
					args = append(args, strconv.FormatInt(h.id, 10))
				}
				cmds = append(cmds, redis.NewStringSliceCmd(cctx, args...))
				_ = p.Process(cctx, cmds[len(cmds)-1])
			}
			_, err := p.Exec(cctx)
			err = classify(cctx, err)
			if cancel(); err != nil {
				stop(err)
				return
			}
			for _, cmd := range cmds {
				reads <- cmd.Val()
			}
		}
	}()
	at := 0
	for data := range reads {
		for i := 0; i < len(data) && ctx.Err() == nil; i++ {
			h := held[at+i]
			if data[i] == "" || h.status == "" { // an empty half is a missing one
				if data[i] != h.status { // one half alone
					s.reportHalf(strconv.FormatInt(h.id, 10), map[bool]string{true: "data", false: "status"}[data[i] == ""])
				}
			} else if o, err := orderOf(h.id, data[i], h.status); err != nil {
				stop(err)
			} else {
				add(o)
			}
		}
		at += len(data)
	}
	return order.Mark{Position: position}, context.Cause(ctx)
}

type heldStatus struct {
	id     int64
	status string
}

func (s *Orders) Since(ctx context.Context, m order.Mark, limit int) ([]order.Event, order.Mark, bool, error) {
	page, err := (&Events{conn: s.conn}).Events(ctx, order.EventQuery{After: m.Position, Limit: limit})
	return page.Events, order.Mark{Position: page.Last}, page.More, err
}

// Version is the orders' version read in the request's round trip (order.Trip), or else now.
func (s *Orders) Version(ctx context.Context) (uint64, error) {
	if t := tripOf(ctx, s.k.prefix); t != nil && t.read {
		return t.orders, nil
	}
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	vals, err := s.rdb.MGet(ctx, s.k.ordersVersion...).Result()
	if err != nil {
		return 0, classify(ctx, err)
	}
	v, _, err := version(vals)
	return v, err
}

// Cancel runs cancel.lua: pending becomes cancelled, in one step for every instance.
func (s *Orders) Cancel(ctx context.Context, id int64) (order.Order, bool, error) {
	field := strconv.FormatInt(id, 10)
	cmd, err := s.run(ctx, cancelScript, s.k.orders, field, newGeneration())
	res, _ := cmd.StringSlice()
	if err != nil || len(res) != 2 {
		return order.Order{}, false, cmp.Or(err, fmt.Errorf("cancel.lua replied %q", res))
	}
	if res[0] == "" { // missing, or half-written
		s.reportHalf(field, res[1])
		return order.Order{}, false, order.ErrNotFound
	}
	found, err := orderOf(id, res[1], res[0])
	if err != nil {
		return order.Order{}, false, err
	}
	o, err := found.Cancel()
	return o, found.Status == order.StatusPending, err
}

// importChunk is the orders of one import.lua: one HMGET and HSET per hash for all of them.
const importChunk = 1000

// Import loads orders, and returns how many fields changed.
func (s *Orders) Import(ctx context.Context, orders []order.Order) (int64, error) {
	if err := order.ValidateAll(orders); err != nil {
		return 0, err
	}
	return s.ImportBatches(ctx, order.Slice(orders, importChunk))
}

// ImportBatches is Import of batches: nothing from a refused batch or a failed chunk on is written.
func (s *Orders) ImportBatches(ctx context.Context, orders order.Batches[order.Order]) (int64, error) {
	var changed int64
	err := orders(order.CheckEach[order.Order](), func(batch []order.Order) error {
		for part := range slices.Chunk(batch, importChunk) {
			args := append(make([]any, 0, 1+3*len(part)), newGeneration())
			for _, o := range part {
				data, _ := json.Marshal(orderData{o.PetID, o.Quantity, o.ShipDate.UTC(), o.Complete}) // never fails
				args = append(args, strconv.FormatInt(o.ID, 10), string(data), string(o.Status))
			}
			cmd, err := s.run(ctx, importScript, s.k.orders, args...)
			n, _ := cmd.Int64()
			if changed += n; err != nil {
				return err
			}
		}
		return nil
	})
	return changed, err
}

// errBadRecord is data that another writer left in a form the layout does not allow.
var errBadRecord = fmt.Errorf("%w: bad order record in redis", order.ErrCorrupt)

// parseID reads an order's id as FormatInt writes it: "007" or "+7" would be another field.
func parseID(field string) (int64, error) {
	id, err := strconv.ParseInt(field, 10, 64)
	if err != nil || strconv.FormatInt(id, 10) != field || id < 0 {
		return 0, fmt.Errorf("%w: id %q", errBadRecord, field)
	}
	return id, nil
}

// orderOf decodes an order; json.Marshal's form directly, since encoding/json was most of a list's time.
func orderOf(id int64, data, status string) (order.Order, error) {
	d, ok := parseData(data)
	var err error
	if !ok {
		d = orderData{} // parseData's part read
		err = json.Unmarshal([]byte(data), &d)
	}
	o := order.Order{ID: id, PetID: d.PetID, Quantity: d.Quantity, ShipDate: d.ShipDate, Complete: d.Complete, Status: order.Status(status)}
	if err = cmp.Or(err, o.Validate()); err != nil {
		return order.Order{}, fmt.Errorf("%w: order %d: %v", errBadRecord, id, err)
	}
	return o, nil
}

// reportHalf logs an order another system left half-written, each once, the first thousand.
func (s *Orders) reportHalf(field, missing string) {
	if missing == "" || s.reported.Load() >= 1000 {
		return
	}
	if _, seen := s.halves.LoadOrStore(field, true); !seen {
		s.reported.Add(1)
		packageLogger().Warn("order in redis is half-written, so it is neither listed nor cancelled",
			slog.String("order", field), slog.String("missing", missing))
	}
}

// orderData is an order in Redis, less its id (the field) and status (the other hash).
type orderData struct {
	PetID    int64     `json:"petId"`
	Quantity int32     `json:"quantity"`
	ShipDate time.Time `json:"shipDate"`
	Complete bool      `json:"complete"`
}

// parseData reads {"petId":N,"quantity":N,"shipDate":"RFC 3339","complete":B} exactly (FuzzParseData).
func parseData(s string) (d orderData, ok bool) {
	rest, ok0 := strings.CutPrefix(s, `{"petId":`)
	pet, rest, ok1 := strings.Cut(rest, `,"quantity":`)
	qty, rest, ok2 := strings.Cut(rest, `,"shipDate":"`)
	date, complete, ok3 := strings.Cut(rest, `","complete":`)
	d.PetID, ok1 = jsonInt(pet, 64, ok1)
	q, ok2 := jsonInt(qty, 32, ok2)
	d.Quantity, d.Complete = int32(q), complete == "true}"
	return d, ok0 && ok1 && ok2 && ok3 && (d.Complete || complete == "false}") &&
		!strings.ContainsAny(date, `\"`) && d.ShipDate.UnmarshalText([]byte(date)) == nil
}

// jsonInt reads an integer of bits as JSON writes it: no '+', no leading zero.
func jsonInt(s string, bits int, ok bool) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, bits)
	return n, ok && err == nil && s[0] != '+' && (len(s) < 2 || s[0] != '0' && s[:2] != "-0")
}

// Pets is an order.PetStore in Redis: one hash of pets by id.
type Pets struct{ conn }

func NewPets(rdb redis.UniversalClient, prefix string, timeout time.Duration) (*Pets, error) {
	c, err := newConn(rdb, prefix, timeout)
	return &Pets{c}, err
}

type petData struct {
	Name   string          `json:"name"`
	Status order.PetStatus `json:"status"`
}

func (s *Pets) Pet(ctx context.Context, id int64) (order.Pet, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	raw, err := s.rdb.HGet(ctx, s.k.petsData, strconv.FormatInt(id, 10)).Result()
	if errors.Is(err, redis.Nil) {
		return order.Pet{}, order.ErrPetNotFound
	} else if err != nil {
		return order.Pet{}, classify(ctx, err)
	}
	var d petData
	err = json.Unmarshal([]byte(raw), &d)
	p := order.Pet{ID: id, Name: d.Name, Status: d.Status}
	if err = cmp.Or(err, p.Validate()); err != nil {
		return order.Pet{}, fmt.Errorf("%w: pet %d in redis: %w", order.ErrCorrupt, id, err)
	}
	return p, nil
}

// ImportBatches writes pets, a batch an HSET: nothing from a refused batch on is written.
func (s *Pets) ImportBatches(ctx context.Context, pets order.Batches[order.Pet]) error {
	return pets(order.CheckEach[order.Pet](), func(part []order.Pet) error {
		fields := make([]any, 0, 2*len(part))
		for _, pet := range part {
			data, _ := json.Marshal(petData{pet.Name, pet.Status}) // strings: never fails
			fields = append(fields, strconv.FormatInt(pet.ID, 10), data)
		}
		ctx, cancel := callContext(ctx, s.timeout)
		defer cancel()
		return classify(ctx, s.rdb.HSet(ctx, s.k.petsData, fields...).Err())
	})
}
