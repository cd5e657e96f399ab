package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
)

var _ order.Finder = (*Orders)(nil)

// Get reads both halves of one order in one transaction. A half-written order is absent.
func (s *Orders) Get(ctx context.Context, id int64) (order.Order, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	field := strconv.FormatInt(id, 10)
	var data, status *redis.StringCmd
	err := s.txPipelined(ctx, func(p redis.Pipeliner) error {
		data = p.HGet(ctx, s.k.ordersData, field)
		status = p.HGet(ctx, s.k.ordersStatus, field)
		return nil
	})
	// The transaction reports its first error only: a missing data field's redis.Nil would
	// hide a status hash's WRONGTYPE, which must be corrupt here as in List and Find.
	for _, err := range [...]error{err, data.Err(), status.Err()} {
		if err != nil && !errors.Is(err, redis.Nil) {
			return order.Order{}, classify(ctx, err)
		}
	}
	o, ok, err := s.whole(field, data.Val(), status.Val()) // "" for a missing field
	if err == nil && !ok {
		err = order.ErrNotFound
	}
	return o, err
}

// Find runs find.lua over the index that narrows f most (docs/redis-layout.md).
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
	ctx, cancel := callContext(ctx, s.timeout)
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

// candidates reads find.lua's reply: three arrays, the members, their data and statuses.
func (s *Orders) candidates(res []any) ([]order.Candidate, error) {
	members, _ := res[0].([]any)
	data, _ := res[1].([]any)
	statuses, _ := res[2].([]any)
	if len(data) != len(members) || len(statuses) != len(members) {
		return nil, fmt.Errorf("find.lua returned %d members, %d data, %d statuses", len(members), len(data), len(statuses))
	}
	ids, fields, err := idsOf(stringsOf(members))
	if err != nil {
		return nil, err
	}
	return s.ordersAt(ids, fields, stringsOf(data), stringsOf(statuses))
}

// stringsOf is a script's array of strings, with "" for each nil (a missing field).
func stringsOf(vals []any) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i], _ = v.(string)
	}
	return out
}

// idsOf reads index members: each an id in decimal, zero-padded to 19 digits. fields are the
// ids as the hashes name them, without the zeros. (A loop of its own: strconv and a check of
// the digits took 7% of the CPU of a list's build.)
func idsOf(members []string) (ids []int64, fields []string, err error) {
	ids, fields = make([]int64, len(members)), make([]string, len(members))
	for i, m := range members {
		var id uint64 // 19 digits never overflow it
		ok := len(m) == 19
		for j := 0; ok && j < len(m); j++ {
			d := m[j] - '0'
			ok = d <= 9
			id = id*10 + uint64(d)
		}
		if !ok || id > math.MaxInt64 {
			return nil, nil, fmt.Errorf("%w: index member %q", errBadRecord, m)
		}
		zeros := 0
		for zeros < len(m)-1 && m[zeros] == '0' {
			zeros++
		}
		ids[i], fields[i] = int64(id), m[zeros:]
	}
	return ids, fields, nil
}

// ordersAt decodes the orders of ids from what HMGET of the data and the status hashes read
// for their fields ("" where a field is missing); Exists is false where an order is not whole.
func (s *Orders) ordersAt(ids []int64, fields, data, statuses []string) ([]order.Candidate, error) {
	out := make([]order.Candidate, len(ids))
	for i, id := range ids {
		out[i].ID = id
		var err error
		if out[i].Order, out[i].Exists, err = s.whole(fields[i], data[i], statuses[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}
