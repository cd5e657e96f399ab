package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"sync"

	"github.com/petstore/orderd/internal/order"
)

var _ order.Store = (*Orders)(nil)

// Orders is an order.Store in the orders table.
type Orders struct{ db *DB }

// NewOrders returns the order store of db.
func NewOrders(db *DB) *Orders { return &Orders{db: db} }

// List reads every order in one statement, so it sees one committed state of the file.
func (s *Orders) List(ctx context.Context) ([]order.Order, error) {
	rows, err := s.db.stmts.listOrders.QueryContext(ctx)
	if err != nil {
		return nil, s.db.fail(ctx, err)
	}
	defer rows.Close()
	out := []order.Order{} // never nil: an empty store is an empty list
	for rows.Next() {
		o, err := scanOrder(rows)
		if err != nil {
			return nil, s.db.fail(ctx, err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, s.db.fail(ctx, err)
	}
	return out, nil
}

// Version returns the counter that the schema's triggers move with every change to the
// orders, committed by any process. It reads the file unless no connection of any process
// has committed since it last did (the read cache, cache.go), so there is no staleness to
// bound: a List after it starts from a state at least as new.
func (s *Orders) Version(ctx context.Context) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	h, cacheable := s.db.cache.header() // before the query: see readCache
	if cacheable {
		if v, ok := s.db.cache.versionAt(h); ok {
			return v, nil
		}
	}
	readCtx, err := pointRead(ctx)
	if err != nil {
		return 0, err
	}
	r := versionRows.Get().(*versionRow)
	defer versionRows.Put(r)
	if err := s.db.stmts.ordersVersion.QueryRowContext(readCtx).Scan(r.dest[:]...); err != nil {
		return 0, s.db.fail(ctx, err)
	}
	if cacheable {
		s.db.cache.keepVersion(h, uint64(r.value))
	}
	return uint64(r.value), nil
}

// versionRow is where Version scans the counter, with the pointer Scan takes made once: it
// runs on every list request, and a fresh variable and its pointer cost allocations of it.
// It is only a buffer: each scan overwrites it.
type versionRow struct {
	value int64
	dest  [1]any // &value
}

var versionRows = sync.Pool{New: func() any {
	r := &versionRow{}
	r.dest[0] = &r.value
	return r
}}

// Cancel applies order.Order.Cancel to the order in a write transaction: reading the status
// and writing the new one are one step for every process that shares the file.
//
// Only a pending order needs that transaction. An unknown id, a shipped order and a cancelled
// one are answered from a read, which runs beside other readers where a write transaction
// takes its turn among every writer of the file: the read sees every commit made before it
// started, and none of these answers can be undone by a later one (an order's status never
// leaves shipped or cancelled, and orders are never deleted).
func (s *Orders) Cancel(ctx context.Context, id int64) (order.Order, bool, error) {
	current, err := s.Get(ctx, id)
	if err != nil {
		return order.Order{}, false, err
	}
	if current.Status != order.StatusPending {
		after, err := current.Cancel()
		return after, false, err
	}
	tx, done, err := s.db.beginWrite(ctx)
	if err != nil {
		return order.Order{}, false, err
	}
	defer done()
	before, err := scanOrder(tx.StmtContext(ctx, s.db.stmts.selectOrder).QueryRowContext(ctx, id))
	if errors.Is(err, sql.ErrNoRows) {
		return order.Order{}, false, order.ErrNotFound
	}
	if err != nil {
		return order.Order{}, false, s.db.fail(ctx, err)
	}
	after, err := before.Cancel()
	if err != nil || after.Status == before.Status {
		return after, false, err
	}
	if _, err := tx.StmtContext(ctx, s.db.stmts.cancelOrder).ExecContext(ctx, after.Status, id); err != nil {
		return before, false, s.db.fail(ctx, err)
	}
	if err := s.db.commit(tx); err != nil {
		return before, false, s.db.fail(ctx, err)
	}
	return after, true, nil
}

// scanOrder reads the orderColumns of one row, and reports a row the service cannot use
// as store.ErrCorrupt naming the order.
func scanOrder(row interface{ Scan(...any) error }) (order.Order, error) {
	var (
		o                  order.Order
		quantity, complete int64
		shipDate, status   string
	)
	if err := row.Scan(&o.ID, &o.PetID, &quantity, &shipDate, &complete, &status); err != nil {
		return order.Order{}, err
	}
	if quantity < 0 || quantity > math.MaxInt32 {
		return order.Order{}, corrupt("order %d: quantity %d is not an int32", o.ID, quantity)
	}
	if complete != 0 && complete != 1 {
		return order.Order{}, corrupt("order %d: complete is %d, not 0 or 1", o.ID, complete)
	}
	var err error
	if o.ShipDate, err = parseTimestamp(shipDate); err != nil {
		return order.Order{}, corrupt("order %d: shipDate %q: %w", o.ID, shipDate, err)
	}
	o.Quantity, o.Complete, o.Status = int32(quantity), complete == 1, order.Status(status)
	if err := o.Validate(); err != nil {
		return order.Order{}, corrupt("%w", err)
	}
	return o, nil
}
