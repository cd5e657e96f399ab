package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
)

var _ order.Finder = (*Orders)(nil)

// Get reads both halves of one order in one transaction. A half-written order is absent.
func (s *Orders) Get(ctx context.Context, id int64) (order.Order, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	field := strconv.FormatInt(id, 10)
	var data, status *redis.StringCmd
	err := s.txPipelined(ctx, func(p redis.Pipeliner) error {
		data = p.HGet(ctx, s.k.ordersData, field)
		status = p.HGet(ctx, s.k.ordersStatus, field)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return order.Order{}, classify(ctx, err)
	}
	d, dataErr := data.Result()
	st, statusErr := status.Result()
	switch {
	case errors.Is(dataErr, redis.Nil) && errors.Is(statusErr, redis.Nil):
		return order.Order{}, order.ErrNotFound
	case errors.Is(dataErr, redis.Nil):
		s.halves.report(field, "no-data")
		return order.Order{}, order.ErrNotFound
	case errors.Is(statusErr, redis.Nil):
		s.halves.report(field, "no-status")
		return order.Order{}, order.ErrNotFound
	case dataErr != nil || statusErr != nil:
		return order.Order{}, classify(ctx, errors.Join(dataErr, statusErr))
	}
	return decodeOrder(field, d, st)
}

// Find runs find.lua over the index that narrows f most: the sets of its states when it
// names one or two, otherwise every id (a pet or a ship-date range is kept by
// order.Filter.Matches on the orders read; see index.go). One script reads at most
// req.Budget()+1 members and their orders, in one step, so the page is of one state of
// Redis: an order cancelled meanwhile is in exactly one state's set.
func (s *Orders) Find(ctx context.Context, f order.Filter, req order.PageRequest) (order.Page, error) {
	if err := order.CheckFind(f, req); err != nil {
		return order.Page{}, err
	}
	keys := []string{s.k.ordersData, s.k.ordersStatus}
	if statuses := f.StatusesToIndex(); statuses != nil {
		for _, st := range statuses {
			keys = append(keys, s.k.ordersByStatus[st])
		}
	} else {
		keys = append(keys, s.k.ordersIDs)
	}
	from := "-"
	if req.After != nil {
		from = "(" + member(*req.After)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	res, err := findScript.Run(ctx, s.rdb, keys, from, req.Budget()+1).Slice()
	if err != nil {
		return order.Page{}, classify(ctx, err)
	}
	read, err := s.candidates(res)
	if err != nil {
		return order.Page{}, err
	}
	return order.PageOf(f, req, read), nil
}

// candidates reads the reply of find.lua: the members, and each one's data and status.
func (s *Orders) candidates(res []any) ([]order.Candidate, error) {
	if len(res) != 3 {
		return nil, fmt.Errorf("find.lua returned %d values", len(res))
	}
	members, _ := res[0].([]any)
	data, _ := res[1].([]any)
	statuses, _ := res[2].([]any)
	if len(data) != len(members) || len(statuses) != len(members) {
		return nil, fmt.Errorf("find.lua returned %d members, %d data, %d statuses", len(members), len(data), len(statuses))
	}
	out := make([]order.Candidate, len(members))
	for i, m := range members {
		ms, _ := m.(string)
		id, err := strconv.ParseInt(ms, 10, 64)
		if err != nil || len(ms) != 19 {
			return nil, fmt.Errorf("%w: index member %q", errBadRecord, ms)
		}
		out[i].ID = id
		d, hasData := data[i].(string)
		st, hasStatus := statuses[i].(string)
		field := strconv.FormatInt(id, 10)
		switch {
		case !hasData && !hasStatus: // an index entry of no order: examined, nothing to serve
			continue
		case !hasData:
			s.halves.report(field, "no-data")
			continue
		case !hasStatus:
			s.halves.report(field, "no-status")
			continue
		}
		if out[i].Order, err = decodeOrder(field, d, st); err != nil {
			return nil, err
		}
		out[i].Exists = true
	}
	return out, nil
}
