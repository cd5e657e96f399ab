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

// A Find reads ranges in id order from a B-tree with a LIMIT, examining at most the budget: a
// pet's, one per state (merged: an IN would sort), or the ids (ship dates too: their index would
// sort); order.Filter.Matches keeps the rest, which in SQL would read past the budget.
const (
	findByPet    = "SELECT " + orderColumns + " FROM orders INDEXED BY orders_by_pet WHERE pet_id = ? AND id > ? ORDER BY id LIMIT ?"
	findByStatus = "SELECT " + orderColumns + " FROM orders INDEXED BY orders_by_status WHERE status = ? AND id > ? ORDER BY id LIMIT ?"
	findByID     = "SELECT " + orderColumns + " FROM orders WHERE id > ? ORDER BY id LIMIT ?"
)

// Get reads one order by its id, or answers from the read cache.
func (s *Orders) Get(ctx context.Context, id int64) (order.Order, error) {
	o, err := cachedRead(ctx, s.db, &s.db.cache.orders, "orders", id, func(readCtx context.Context) (*order.Order, error) {
		o, err := scanOrder(s.db.stmts.selectOrder.QueryRowContext(readCtx, id))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		return &o, s.db.fail(ctx, err)
	})
	switch {
	case err != nil:
		return order.Order{}, err
	case o == nil:
		return order.Order{}, order.ErrNotFound
	}
	return *o, nil
}

// Find reads one page of the orders f keeps. The ranges of a filter on two states are read in
// one transaction, so an order cancelled meanwhile is in exactly one of them.
func (s *Orders) Find(ctx context.Context, f order.Filter, req order.PageRequest) (_ order.Page, err error) {
	ctx, end := s.db.span(ctx, "SELECT", "orders")
	defer func() { end(err) }()
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
	var read []order.Order
	switch statuses := f.StatusesToIndex(); {
	case f.PetID != nil:
		read, err = s.readRange(ctx, tx, s.db.stmts.findByPet, *f.PetID, after, limit)
	case statuses != nil:
		for _, st := range statuses {
			var part []order.Order
			if part, err = s.readRange(ctx, tx, s.db.stmts.findByStatus, string(st), after, limit); err != nil {
				break
			}
			read = append(read, part...)
		}
		slices.SortFunc(read, func(a, b order.Order) int { return cmp.Compare(a.ID, b.ID) })
		read = read[:min(len(read), limit)]
	default:
		read, err = s.readRange(ctx, tx, s.db.stmts.findByID, after, limit)
	}
	if err != nil {
		return order.Page{}, s.db.fail(ctx, err)
	}
	candidates := make([]order.Candidate, len(read))
	for i, o := range read {
		candidates[i] = order.Candidate{ID: o.ID, Order: o, Exists: true}
	}
	return order.PageOf(f, req, candidates), nil
}

func (s *Orders) readRange(ctx context.Context, tx *sql.Tx, stmt *sql.Stmt, args ...any) ([]order.Order, error) {
	rows, err := tx.StmtContext(ctx, stmt).QueryContext(ctx, args...)
	return scanRows(rows, err, scanOrder)
}
