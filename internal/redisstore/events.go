package redisstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
)

// Events is the order.EventLog in Redis: one stream, appended to in each change's script.
type Events struct{ conn }

func NewEvents(rdb redis.UniversalClient, prefix string, timeout time.Duration) (*Events, error) {
	c, err := newConn(rdb, prefix, timeout)
	return &Events{conn: c}, err
}

// Events reads a page after q.After. A position that is no entry (nor the newest dropped, nor 0-0)
// is expired: it is of a history Trim dropped or Redis lost.
func (e *Events) Events(ctx context.Context, q order.EventQuery) (order.EventPage, error) {
	if q.Limit < 1 {
		return order.EventPage{}, fmt.Errorf("events: limit %d, want at least 1", q.Limit)
	}
	after, ok := parseStreamID(q.After)
	if q.After != "" && (!ok || after == streamID{math.MaxUint64, math.MaxUint64}) { // no position follows the greatest
		return order.EventPage{}, order.ErrEventsExpired
	}
	position := map[bool]string{true: after.String()}[ok] // Redis's spelling of it, or ""
	last, maxDeleted, held, entries, err := e.read(ctx, position, q.Limit)
	if err != nil {
		return order.EventPage{}, err
	}
	if q.After != "" && (after.less(maxDeleted) || last.less(after) || (after != maxDeleted && !held)) {
		return order.EventPage{}, order.ErrEventsExpired
	}
	page := order.EventPage{Last: cmp.Or(position, last.String()), More: len(entries) == 5*q.Limit} // as LastEventID spells it
	for entry := range slices.Chunk(entries, 5) {
		ev, err := decodeEvent(entry)
		if err != nil {
			return order.EventPage{}, err
		}
		page.Last = ev.ID
		if len(q.Types) == 0 || slices.Contains(q.Types, ev.Type) {
			page.Events = append(page.Events, ev)
		}
	}
	return page, nil
}

// LastEventID is the stream's last-generated-id; "0-0" without a stream.
func (e *Events) LastEventID(ctx context.Context) (string, error) {
	last, _, _, _, err := e.read(ctx, "", 0)
	return last.String(), err
}

// Trim runs trim.lua, sent once.
func (e *Events) Trim(ctx context.Context, r order.Retention) (int64, error) {
	ms, count := int64((max(r.MaxAge, 0)+time.Millisecond-1)/time.Millisecond), max(r.MaxCount, 0) // ms rounded up: never younger
	cmd, err := e.run(ctx, trimScript, []string{e.k.ordersEvents}, ms, count, count+1)
	n, _ := cmd.Int64()
	return n, err
}

// read runs events.lua after a position ("": from the first).
func (e *Events) read(ctx context.Context, after string, limit int) (last, maxDeleted streamID, held bool, entries []string, err error) {
	ctx, cancel := callContext(ctx, e.timeout)
	defer cancel()
	res, err := eventsScript.Run(ctx, e.rdb, []string{e.k.ordersEvents}, after, limit).StringSlice()
	if err != nil {
		return last, maxDeleted, false, nil, classify(ctx, err)
	}
	var ok [2]bool
	last, ok[0] = parseStreamID(res[0])
	if maxDeleted, ok[1] = parseStreamID(res[1]); ok != [2]bool{true, true} {
		err = fmt.Errorf("%w: events.lua replied %q", errBadRecord, res[:2])
	}
	return last, maxDeleted, res[2] == "1", res[3:], err
}

// decodeEvent reads one entry of events.lua.
func decodeEvent(f []string) (order.Event, error) {
	at, ok := parseStreamID(f[0])
	if !ok || at.ms > math.MaxInt64 || !slices.Contains(order.EventTypes, order.EventType(f[1])) {
		return order.Event{}, fmt.Errorf("%w: event %s: type %q", errBadRecord, f[0], f[1])
	}
	oid, err := parseID(f[2])
	o, oerr := orderOf(oid, f[3], f[4])
	if err = cmp.Or(err, oerr); err != nil {
		return order.Event{}, fmt.Errorf("event %s: %w", f[0], err)
	}
	return order.Event{ID: f[0], Type: order.EventType(f[1]), Time: time.UnixMilli(int64(at.ms)).UTC(), Order: o}, nil
}

// streamID is a position in a stream: its entries' ids, ms-seq, ordered by ms then seq.
type streamID struct{ ms, seq uint64 }

func parseStreamID(s string) (id streamID, ok bool) {
	ms, seq, ok := strings.Cut(s, "-")
	var err1, err2 error
	id.ms, err1 = strconv.ParseUint(ms, 10, 64)
	id.seq, err2 = strconv.ParseUint(seq, 10, 64)
	return id, ok && err1 == nil && err2 == nil
}

func (a streamID) less(b streamID) bool { return a.ms < b.ms || (a.ms == b.ms && a.seq < b.seq) }

func (a streamID) String() string { return fmt.Sprintf("%d-%d", a.ms, a.seq) }

// waitBlock bounds each XREAD: a wait outlasts the call timeout, and a cancel ends it within a block.
const waitBlock = 2 * time.Second

// WaitForEvents returns once an entry follows after, at once for no position. Each XREAD ends on its
// own by the caller's deadline: cut, its connection would be closed.
func (e *Events) WaitForEvents(ctx context.Context, after string) error {
	a, ok := parseStreamID(after)
	if !ok && after != "" {
		return nil
	}
	for ctx.Err() == nil {
		block := waitBlock
		if d, ok := ctx.Deadline(); ok {
			block = max(min(block, time.Until(d)), time.Millisecond) // BLOCK 0 would wait for ever
		}
		c, cancel := callContext(context.WithoutCancel(ctx), block+e.timeout)
		err := classify(c, e.rdb.XRead(c, &redis.XReadArgs{Streams: []string{e.k.ordersEvents, a.String()}, Count: 1, Block: block}).Err())
		if cancel(); !errors.Is(err, redis.Nil) { // Nil: nothing within the block
			return err
		}
	}
	return ctx.Err()
}
