package redisstore

import (
	"context"
	"fmt"
	"strconv"
)

// The indexes of the orders, which Find reads a bounded range of (docs/redis-layout.md):
//
//   - {P:orders}:ids: a sorted set of every order's id;
//   - {P:orders}:by-status:<state>: a sorted set of the ids of the orders in that state, for
//     each of the three.
//
// A sorted set's score is a double, which cannot tell apart ids past 2^53: every member has
// score 0 and is the id in decimal, zero-padded to 19 digits (member), so that the sets sort
// members by their bytes (ZRANGEBYLEX) in the order of the ids, exactly, from 0 to
// 9223372036854775807. Every script that creates an order or changes its state updates them
// in the same step (import.lua, cancel.lua), and so must other systems.
//
// Pets are not indexed: a pet's orders would need a set per pet, moved whenever an import
// changes an order's pet, which import.lua can only learn by decoding the JSON it replaces.
// A filter on a pet walks the ids (or the states' sets) instead, within the same budget.
//
// Data written before the indexes existed (or by a system that did not update them) is put
// in them by Reindex, which every Import runs after its writes: running `orderd import` once
// builds them.

// member is the index member of id: see above.
func member(id int64) string { return fmt.Sprintf("%019d", id) }

// reindexBatch is how many orders one reindex.lua call fixes: one short step of Redis.
const reindexBatch = 1000

// Reindex puts every order with a status in the indexes where its status says it belongs,
// a batch at a time (HSCAN over the status hash, then reindex.lua, which reads each status
// again in its own step, so that a cancel made meanwhile stands). It returns how many
// entries it added or removed. It changes no order, so the version does not move.
func (s *Orders) Reindex(ctx context.Context) (int64, error) {
	keys := append([]string{s.k.ordersStatus, s.k.ordersIDs}, s.k.statusSets()...)
	var moved int64
	var cursor uint64
	for {
		callCtx, cancel := s.call(ctx)
		fields, next, err := s.rdb.HScan(callCtx, s.k.ordersStatus, cursor, "", reindexBatch).Result()
		if err != nil {
			err = classify(callCtx, err)
			cancel()
			return moved, err
		}
		args := make([]any, 0, len(fields))
		for i := 0; i+1 < len(fields); i += 2 {
			id, err := strconv.ParseInt(fields[i], 10, 64)
			if err != nil || id < 0 {
				continue // not an order id: neither listed nor indexed
			}
			args = append(args, fields[i], member(id))
		}
		if len(args) > 0 {
			n, err := reindexScript.Run(callCtx, s.once(), keys, args...).Int64()
			if err != nil {
				err = classify(callCtx, err)
				cancel()
				return moved, err
			}
			moved += n
		}
		cancel()
		if next == 0 {
			return moved, nil
		}
		cursor = next
	}
}
