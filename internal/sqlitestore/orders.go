package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/petstore/orderd/internal/order"
)

// Orders is an order.Store in the orders table.
type Orders struct{ db *DB }

// NewOrders returns the order store of db.
func NewOrders(db *DB) *Orders { return &Orders{db: db} }

const orderColumns = "id, pet_id, quantity, ship_date, complete, status"

// Version moves with every change to the orders, whoever makes it: a change that records an
// event moves the newest event id, which never goes back; a DELETE moves orders_version.
func (s *Orders) Version(ctx context.Context) (uint64, error) {
	return cachedRead(ctx, s.db, "orders_version", versionKey{}, func(readCtx context.Context) (uint64, error) {
		var v int64
		err := s.db.sql.QueryRowContext(readCtx, "SELECT value + "+newestEventID+" FROM orders_version").Scan(&v)
		return uint64(v), s.db.fail(ctx, err)
	})
}

// Load reads every order in id order, and the log's newest position, in one read
// transaction: the orders are what the file held at that position.
func (s *Orders) Load(ctx context.Context, add func(order.Order)) (m order.Mark, err error) {
	ctx, end := s.db.span(ctx, "SELECT", "orders")
	defer func() { end(err) }()
	err = s.db.readTx(ctx, func(tx *sql.Tx) error {
		var newest int64
		if err := tx.QueryRowContext(ctx, "SELECT value, "+newestEventID+" FROM orders_version").Scan(&m.Epoch, &newest); err != nil {
			return s.db.fail(ctx, err)
		}
		m.Position = strconv.FormatInt(newest, 10)
		rows, err := tx.QueryContext(ctx, "SELECT "+orderColumns+" FROM orders ORDER BY id")
		if err != nil {
			return s.db.fail(ctx, err)
		}
		defer rows.Close()
		for rows.Next() {
			o, err := scanOrder(rows)
			if err != nil {
				return s.db.fail(ctx, err)
			}
			add(o)
		}
		return s.db.fail(ctx, rows.Err())
	})
	return m, err
}

// Since reads the events after m, in one read transaction with the epoch (orders_version,
// which only a DELETE moves): a new epoch is order.ErrReload.
func (s *Orders) Since(ctx context.Context, m order.Mark, limit int) (events []order.Event, next order.Mark, more bool, err error) {
	ctx, end := s.db.span(ctx, "SELECT", "order_events")
	defer func() { end(err) }()
	next = m
	err = s.db.readTx(ctx, func(tx *sql.Tx) error {
		var epoch uint64
		if err := tx.QueryRowContext(ctx, "SELECT value FROM orders_version").Scan(&epoch); err != nil {
			return s.db.fail(ctx, err)
		} else if epoch != m.Epoch {
			return order.ErrReload
		}
		page, err := NewEvents(s.db).read(ctx, tx, order.EventQuery{After: m.Position, Limit: limit})
		events, next.Position, more = page.Events, page.Last, page.More
		return err
	})
	if err != nil {
		return nil, m, false, err
	}
	return events, next, more, nil
}

// Cancel applies order.Order.Cancel in a write transaction, one step for every process.
func (s *Orders) Cancel(ctx context.Context, id int64) (after order.Order, changed bool, err error) {
	ctx, end := s.db.span(ctx, "UPDATE", "orders")
	defer func() { end(err) }()
	err = s.db.write(ctx, func(tx *sql.Tx) error {
		before, err := scanOrder(tx.QueryRowContext(ctx, "SELECT "+orderColumns+" FROM orders WHERE id = ?", id))
		if errors.Is(err, sql.ErrNoRows) {
			return order.ErrNotFound
		} else if err != nil {
			return s.db.fail(ctx, err)
		}
		if after, err = before.Cancel(); err != nil {
			return err
		} else if after.Status == before.Status {
			return errNoWrite
		}
		_, err = tx.ExecContext(ctx, "UPDATE orders SET status = ? WHERE id = ?", after.Status, id)
		changed = err == nil
		return s.db.fail(ctx, err)
	})
	if err != nil && !errors.Is(err, order.ErrAlreadyShipped) {
		return order.Order{}, false, err
	}
	return after, changed, err
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
	p := order.Pet{ID: id} // a point read, not watched (cachedRead says why)
	err = s.db.sql.QueryRowContext(context.WithoutCancel(ctx), "SELECT name, status FROM pets WHERE id = ?", id).Scan(&p.Name, &p.Status)
	if errors.Is(err, sql.ErrNoRows) {
		return order.Pet{}, order.ErrPetNotFound
	} else if err != nil {
		return order.Pet{}, s.db.fail(ctx, err)
	} else if err := p.Validate(); err != nil {
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

// scanOrder reads the orderColumns of a row, and more columns first when dest names them;
// one the service cannot use is ErrCorrupt, named.
func scanOrder(row scanner, dest ...any) (order.Order, error) {
	var (
		o                  order.Order
		quantity, complete int64
		shipDate, status   string
	)
	if err := row.Scan(append(dest, &o.ID, &o.PetID, &quantity, &shipDate, &complete, &status)...); err != nil {
		return order.Order{}, err
	}
	if quantity < 0 || quantity > math.MaxInt32 {
		return order.Order{}, corrupt("order %d: quantity %d is not an int32", o.ID, quantity)
	}
	if complete != 0 && complete != 1 {
		return order.Order{}, corrupt("order %d: complete is %d, not 0 or 1", o.ID, complete)
	}
	var err error
	if o.ShipDate, err = parseTime(shipDate); err != nil {
		return order.Order{}, corrupt("order %d: shipDate %q: %w", o.ID, shipDate, err)
	}
	o.Quantity, o.Complete, o.Status = int32(quantity), complete == 1, order.Status(status)
	if err := o.Validate(); err != nil {
		return order.Order{}, corrupt("%w", err)
	}
	return o, nil
}

// parseTime reads a time in timestampLayout, which is RFC 3339's: time.Parse reads it four
// times faster than any other layout (a Load of a million orders parses a million).
func parseTime(s string) (time.Time, error) {
	if len(s) != len(timestampLayout) || s[len(s)-1] != 'Z' {
		return time.Time{}, errors.New("not a time in the layout " + timestampLayout)
	}
	return time.Parse(time.RFC3339Nano, s)
}
