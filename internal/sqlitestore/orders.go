package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"time"

	"github.com/petstore/orderd/internal/order"
)

var (
	_ order.Store    = (*Orders)(nil)
	_ order.PetStore = (*Pets)(nil)
)

// Orders is an order.Store in the orders table.
type Orders struct{ db *DB }

// NewOrders returns the order store of db.
func NewOrders(db *DB) *Orders { return &Orders{db: db} }

// List reads every order in one statement, so it sees one committed state of the file.
func (s *Orders) List(ctx context.Context) (_ []order.Order, err error) {
	ctx, end := s.db.span(ctx, "SELECT", "orders")
	defer func() { end(err) }()
	rows, err := s.db.stmts.listOrders.QueryContext(ctx)
	list, err := scanRows(rows, err, scanOrder)
	return list, s.db.fail(ctx, err)
}

// Version returns the counter the schema's triggers move with every change to the orders.
func (s *Orders) Version(ctx context.Context) (uint64, error) {
	return cachedRead(ctx, s.db, &s.db.cache.version, "orders_version", struct{}{}, func(readCtx context.Context) (uint64, error) {
		var v int64
		err := s.db.stmts.ordersVersion.QueryRowContext(readCtx).Scan(&v)
		return uint64(v), s.db.fail(ctx, err)
	})
}

// Cancel applies order.Order.Cancel in a write transaction, one step for every process. Only
// a pending order needs it: no commit can undo a read's "unknown", "shipped" or "cancelled".
func (s *Orders) Cancel(ctx context.Context, id int64) (_ order.Order, _ bool, err error) {
	ctx, end := s.db.span(ctx, "UPDATE", "orders")
	defer func() { end(err) }()
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

// Pets is an order.PetStore in the pets table.
type Pets struct{ db *DB }

// NewPets returns the pet store of db.
func NewPets(db *DB) *Pets { return &Pets{db: db} }

// Pet reads one pet.
func (s *Pets) Pet(ctx context.Context, id int64) (_ order.Pet, err error) {
	ctx, end := s.db.span(ctx, "SELECT", "pets")
	defer func() { end(err) }()
	if err := ctx.Err(); err != nil {
		return order.Pet{}, err
	}
	p := order.Pet{ID: id} // a point read, not watched (cachedRead)
	err = s.db.stmts.selectPet.QueryRowContext(context.WithoutCancel(ctx), id).Scan(&p.Name, &p.Status)
	if errors.Is(err, sql.ErrNoRows) {
		return order.Pet{}, order.ErrPetNotFound
	}
	if err != nil {
		return order.Pet{}, s.db.fail(ctx, err)
	}
	if err := p.Validate(); err != nil {
		return order.Pet{}, corrupt("%w", err)
	}
	return p, nil
}

type scanner interface{ Scan(...any) error }

// scanRows reads every row of a query's rows with scan, unless err; the list is never nil.
func scanRows[T any](rows *sql.Rows, err error, scan func(scanner) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// scanOrder reads the orderColumns of a row; one the service cannot use is ErrCorrupt, named.
func scanOrder(row scanner) (order.Order, error) {
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
	if o.ShipDate, err = time.Parse(timestampLayout, shipDate); err != nil {
		return order.Order{}, corrupt("order %d: shipDate %q: %w", o.ID, shipDate, err)
	}
	o.Quantity, o.Complete, o.Status = int32(quantity), complete == 1, order.Status(status)
	if err := o.Validate(); err != nil {
		return order.Order{}, corrupt("%w", err)
	}
	return o, nil
}
