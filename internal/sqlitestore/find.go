package sqlitestore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"

	"github.com/petstore/orderd/internal/order"
)

var _ order.Finder = (*Orders)(nil)

// The three ranges a Find reads, each in id order straight from a B-tree (no sort), each
// with LIMIT: at most the budget of rows is examined whatever the table holds.
//
//   - findByPet: orders_by_pet is (pet_id, rowid), so one pet's orders after an id are one
//     contiguous range of the index. Used whenever the filter names a pet: it is the
//     narrowest index.
//   - findByStatus: orders_by_status is (status, rowid), one range per state. A filter on two
//     states reads two ranges and merges them (an IN over both would need a sort).
//   - findByID: the table itself (the rowid is the id), for a filter on no state or all
//     three, and for a ship-date range alone. orders_by_ship_date is in date order, not id
//     order: a page in id order from it would read every order of the date range and sort
//     them, work that grows with the range. Walking the ids from After for at most the
//     budget and keeping those in the range bounds each call instead.
//
// The other conditions of the filter are kept by order.Filter.Matches on the rows read, not
// in SQL: a WHERE on them would let SQLite read past the budget to fill the LIMIT.
const (
	findByPet    = "SELECT " + orderColumns + " FROM orders INDEXED BY orders_by_pet WHERE pet_id = ? AND id > ? ORDER BY id LIMIT ?"
	findByStatus = "SELECT " + orderColumns + " FROM orders INDEXED BY orders_by_status WHERE status = ? AND id > ? ORDER BY id LIMIT ?"
	findByID     = "SELECT " + orderColumns + " FROM orders WHERE id > ? ORDER BY id LIMIT ?"
)

// Get reads one order by its id, or answers from what the last read of it found while no
// process has committed since (the read cache, cache.go).
func (s *Orders) Get(ctx context.Context, id int64) (order.Order, error) {
	readCtx, err := pointRead(ctx)
	if err != nil {
		return order.Order{}, err
	}
	header, cacheable := s.db.cache.header() // before the query: see readCache
	if cacheable {
		if r, ok := s.db.cache.orders.at(header, id); ok {
			return found(r)
		}
	}
	o, err := scanOrder(s.db.stmts.selectOrder.QueryRowContext(readCtx, id))
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return order.Order{}, s.db.fail(ctx, err)
	}
	r := orderRead{order: o, found: err == nil}
	if cacheable {
		s.db.cache.orders.keep(header, id, r)
	}
	return found(r)
}

// found is what Get answers for r.
func found(r orderRead) (order.Order, error) {
	if !r.found {
		return order.Order{}, order.ErrNotFound
	}
	return r.order, nil
}

// Find reads one page of the orders f keeps, from the range its doc comment above chooses.
// The ranges of a filter on two states are read in one transaction, so they come from one
// committed state of the file: an order cancelled meanwhile is in exactly one of them.
func (s *Orders) Find(ctx context.Context, f order.Filter, req order.PageRequest) (order.Page, error) {
	if err := order.CheckFind(f, req); err != nil {
		return order.Page{}, err
	}
	after := int64(-1) // every id is >= 0 (a CHECK of the table)
	if req.After != nil {
		after = *req.After
	}
	limit := req.Budget() + 1 // one more than the budget tells whether the end is reached
	tx, err := s.db.sql.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return order.Page{}, s.db.fail(ctx, err)
	}
	defer tx.Rollback()
	var read []order.Candidate
	switch statuses := f.StatusesToIndex(); {
	case f.PetID != nil:
		read, err = s.readRange(ctx, tx, s.db.stmts.findByPet, *f.PetID, after, limit)
	case statuses != nil:
		for _, st := range statuses {
			var part []order.Candidate
			if part, err = s.readRange(ctx, tx, s.db.stmts.findByStatus, string(st), after, limit); err != nil {
				break
			}
			read = append(read, part...)
		}
		slices.SortFunc(read, func(a, b order.Candidate) int { return cmp.Compare(a.ID, b.ID) })
		read = read[:min(len(read), limit)]
	default:
		read, err = s.readRange(ctx, tx, s.db.stmts.findByID, after, limit)
	}
	if err != nil {
		return order.Page{}, err
	}
	return order.PageOf(f, req, read), nil
}

// readRange runs one of the find statements with args in tx and returns its rows. The
// statement is prepared once (statements.go): tx.StmtContext reuses what was prepared on the
// transaction's connection, where a query string would be parsed again on every request.
func (s *Orders) readRange(ctx context.Context, tx *sql.Tx, stmt *sql.Stmt, args ...any) ([]order.Candidate, error) {
	rows, err := tx.StmtContext(ctx, stmt).QueryContext(ctx, args...)
	if err != nil {
		return nil, s.db.fail(ctx, err)
	}
	defer rows.Close()
	var out []order.Candidate
	for rows.Next() {
		o, err := scanOrder(rows)
		if err != nil {
			return nil, s.db.fail(ctx, err)
		}
		out = append(out, order.Candidate{ID: o.ID, Order: o, Exists: true})
	}
	if err := rows.Err(); err != nil {
		return nil, s.db.fail(ctx, err)
	}
	return out, nil
}
