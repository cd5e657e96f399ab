package redisstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/store"
)

var _ order.Store = (*Orders)(nil)

// Orders is an order.Store and an order.Finder in Redis: a hash of order data and a hash of
// statuses, by id, and sorted sets of the ids that index them (index.go). Between requests it
// keeps the orders it has reported half-written (halves) and what cancels that changed
// nothing found, for one version of the orders (outcomes; outcomes.go says why answering
// from it is exact).
type Orders struct {
	conn
	halves   halfRecords
	outcomes atomic.Pointer[outcomeCache]
}

// NewOrders returns the store of the deployment whose keys start with prefix.
func NewOrders(rdb rediser, prefix string, timeout time.Duration) (*Orders, error) {
	c, err := newConn(rdb, prefix, timeout)
	return &Orders{conn: c}, err
}

// LogTo sends the store's reports of records it cannot serve to log (by default, to the
// logger given to SetLogger).
func (s *Orders) LogTo(log *slog.Logger) { s.halves.log.Store(log) }

// orderData is an order in Redis, less its id (the field) and status (the other hash).
type orderData struct {
	PetID    int64     `json:"petId"`
	Quantity int32     `json:"quantity"`
	ShipDate time.Time `json:"shipDate"`
	Complete bool      `json:"complete"`
}

// List reads both hashes in one transaction, so it never sees half a change.
func (s *Orders) List(ctx context.Context) ([]order.Order, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var data, status *redis.MapStringStringCmd
	err := s.txPipelined(ctx, func(p redis.Pipeliner) error {
		data = p.HGetAll(ctx, s.k.ordersData)
		status = p.HGetAll(ctx, s.k.ordersStatus)
		return nil
	})
	if err != nil {
		return nil, classify(ctx, err)
	}
	statuses := status.Val()
	out := make([]order.Order, 0, len(data.Val()))
	for field, raw := range data.Val() {
		st, ok := statuses[field]
		if !ok {
			s.halves.report(field, "no-status")
			continue
		}
		o, err := decodeOrder(field, raw, st)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	if len(statuses) > len(out) {
		for field := range statuses {
			if _, ok := data.Val()[field]; !ok {
				s.halves.report(field, "no-data")
			}
		}
	}
	slices.SortFunc(out, func(a, b order.Order) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// Version is where the orders stand in Redis (their counter and generation, see version.go):
// as read in this request's round trip when its Trip carries it, otherwise read now. Nothing
// learned before the request is ever answered.
func (s *Orders) Version(ctx context.Context) (uint64, error) {
	if c := carriedOf(ctx, s.k.prefix); c != nil && c.read {
		return c.orders.id(), nil
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	v, err := readVersion(ctx, s.rdb, s.k.ordersVersion, s.k.ordersGeneration)
	if err != nil {
		return 0, classify(ctx, err)
	}
	return v.id(), nil
}

// Cancel runs cancel.lua: the check and the change are one atomic step in Redis. A cancel
// that would change nothing is answered without it when the request's round trip read the
// orders' version and a cancel of id found its outcome at that very version (outcomeCache).
func (s *Orders) Cancel(ctx context.Context, id int64) (order.Order, bool, error) {
	if c := carriedOf(ctx, s.k.prefix); c != nil && c.read {
		if o, ok := s.outcomes.Load().at(c.orders, id); ok {
			return o.order, false, o.err
		}
	}
	field := strconv.FormatInt(id, 10)
	res, err := s.batch.runScript(ctx, s.rdb, cancelScript, []string{s.k.ordersStatus, s.k.ordersVersion, s.k.ordersData, s.k.ordersGeneration,
		s.k.ordersByStatus[order.StatusPending], s.k.ordersByStatus[order.StatusCancelled]},
		field, newGeneration(), member(id)).Slice()
	if err != nil {
		return order.Order{}, false, classify(ctx, err)
	}
	if len(res) != 4 {
		return order.Order{}, false, fmt.Errorf("cancel.lua returned %d values", len(res))
	}
	outcome, _ := res[0].(string)
	data, _ := res[1].(string)
	// The version the outcome holds at. A version without a generation (Redis lost it) is
	// not one a request can carry, and a counter that is no number not one it can parse: the
	// outcome is answered and not kept.
	v, verr := parseVersion(res[2:4])
	keep := func(o cancelOutcome) {
		if verr == nil {
			s.keepOutcome(v, id, o)
		}
	}
	switch outcome {
	case "missing":
		keep(cancelOutcome{err: order.ErrNotFound})
		return order.Order{}, false, order.ErrNotFound
	case "no-data", "no-status":
		s.halves.report(field, outcome)
		keep(cancelOutcome{err: order.ErrNotFound})
		return order.Order{}, false, order.ErrNotFound
	case "cancelled", "already-cancelled":
		o, err := decodeOrder(field, data, string(order.StatusCancelled))
		if err == nil {
			// After this call's change too: the version is the one the change set, at
			// which the order is cancelled already.
			keep(cancelOutcome{order: o})
		}
		return o, outcome == "cancelled", err
	case string(order.StatusShipped):
		o, err := decodeOrder(field, data, outcome)
		if err != nil {
			return o, false, err
		}
		keep(cancelOutcome{order: o, err: order.ErrAlreadyShipped})
		return o, false, order.ErrAlreadyShipped
	}
	return order.Order{}, false, fmt.Errorf("%w: order %s has status %q", errBadRecord, field, outcome)
}

// Import loads orders as import.lua says, in batches, and returns how many fields changed;
// then it runs Reindex, so that the indexes hold every order, also those written before
// they existed. The whole list is checked before the first batch is written.
func (s *Orders) Import(ctx context.Context, orders []order.Order) (int64, error) {
	if err := order.ValidateAll(orders); err != nil {
		return 0, err
	}
	const batch = 1000
	var changed int64
	for start := 0; start < len(orders); start += batch {
		part := orders[start:min(start+batch, len(orders))]
		args := make([]any, 1, 1+4*len(part))
		args[0] = newGeneration()
		for _, o := range part {
			data, err := json.Marshal(orderData{o.PetID, o.Quantity, o.ShipDate.UTC(), o.Complete})
			if err != nil {
				return changed, err
			}
			args = append(args, strconv.FormatInt(o.ID, 10), member(o.ID), string(data), string(o.Status))
		}
		callCtx, cancel := s.call(ctx)
		keys := append([]string{s.k.ordersData, s.k.ordersStatus, s.k.ordersVersion, s.k.ordersGeneration, s.k.ordersIDs}, s.k.statusSets()...)
		n, err := importScript.Run(callCtx, s.once(), keys, args...).Int64()
		err = classify(callCtx, err) // before cancel, which would make any error look like the caller's
		cancel()
		if err != nil {
			return changed, err
		}
		changed += n
	}
	if _, err := s.Reindex(ctx); err != nil {
		return changed, fmt.Errorf("orders imported, indexes not rebuilt: %w", err)
	}
	return changed, nil
}

// errBadRecord is data in Redis that another writer left in a form the layout does not allow:
// a corrupt record, which retrying will not mend.
var errBadRecord = fmt.Errorf("%w: bad order record in redis", store.ErrCorrupt)

func decodeOrder(field, data, status string) (order.Order, error) {
	id, err := strconv.ParseInt(field, 10, 64)
	if err != nil {
		return order.Order{}, fmt.Errorf("%w: id %q", errBadRecord, field)
	}
	var d orderData
	if err := json.Unmarshal([]byte(data), &d); err != nil {
		return order.Order{}, fmt.Errorf("%w: order %d: %v", errBadRecord, id, err)
	}
	o := order.Order{ID: id, PetID: d.PetID, Quantity: d.Quantity, ShipDate: d.ShipDate, Complete: d.Complete, Status: order.Status(status)}
	if err := o.Validate(); err != nil {
		return order.Order{}, fmt.Errorf("%w: %v", errBadRecord, err)
	}
	return o, nil
}
