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
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
)

var _ order.EventLog = (*Events)(nil)

// Events is the order.EventLog in Redis: one stream, appended to in each change's script; an
// entry's id is the event's, its milliseconds the event's time (docs/redis-layout.md).
type Events struct {
	conn
	// What WaitForEvents watches, for every waiter with one blocking XREAD, which holds a
	// pooled connection: one per waiter would leave none for requests.
	mu      sync.Mutex
	newest  streamID      // the log's newest position, as last read; zero when not known
	moved   chan struct{} // closed when newest moves on, then replaced
	waiters int
	running bool
}

// NewEvents returns the log of the deployment whose keys start with prefix.
func NewEvents(rdb redis.UniversalClient, prefix string, timeout time.Duration) (*Events, error) {
	c, err := newConn(rdb, prefix, timeout)
	return &Events{conn: c, moved: make(chan struct{})}, err
}

// Events reads a page after q.After with events.lua. A position is expired before the newest
// event Trim dropped, past the newest the stream had, or between them and no entry: every
// position given is an entry (or the newest dropped, or 0-0), else one of a history Redis lost.
func (e *Events) Events(ctx context.Context, q order.EventQuery) (order.EventPage, error) {
	if q.Limit < 1 {
		return order.EventPage{}, fmt.Errorf("events: limit %d, want at least 1", q.Limit)
	}
	after, ok := parseStreamID(q.After)
	if q.After != "" && (!ok || after == streamID{math.MaxUint64, math.MaxUint64}) { // no position follows the greatest
		return order.EventPage{}, order.ErrEventsExpired
	}
	position := ""
	if ok {
		position = after.String() // Redis's spelling of it
	}
	last, maxDeleted, entries, held, err := e.read(ctx, position, q.Limit)
	if err != nil {
		return order.EventPage{}, err
	}
	if q.After != "" && (after.less(maxDeleted) || last.less(after) || (after != maxDeleted && !held)) {
		return order.EventPage{}, order.ErrEventsExpired
	}
	page := order.EventPage{Last: cmp.Or(q.After, last.String()), More: len(entries) == q.Limit}
	for _, raw := range entries {
		ev, err := decodeEvent(raw)
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

// Trim runs trim.lua, sent once, as each script that writes alone is.
func (e *Events) Trim(ctx context.Context, r order.Retention) (int64, error) {
	ms, count := int64((max(r.MaxAge, 0)+time.Millisecond-1)/time.Millisecond), max(r.MaxCount, 0) // ms rounded up: never younger
	cmd, err := e.run(ctx, trimScript, []string{e.k.ordersEvents}, ms, count, count+1)
	n, _ := cmd.Int64()
	return n, err
}

// read runs events.lua after a position ("": from the first): where the log stands (the
// newest position and the newest dropped), a page, and whether the position is an entry.
func (e *Events) read(ctx context.Context, after string, limit int) (last, maxDeleted streamID, entries []any, held bool, err error) {
	ctx, cancel := callContext(ctx, e.timeout)
	defer cancel()
	res, err := eventsScript.Run(ctx, e.rdb, []string{e.k.ordersEvents}, after, limit).Slice()
	if err != nil {
		return last, maxDeleted, nil, false, classify(ctx, err)
	}
	var ok [3]bool
	if len(res) == 4 {
		last, ok[0] = parseStreamID(fmt.Sprint(res[0]))
		maxDeleted, ok[1] = parseStreamID(fmt.Sprint(res[1]))
		entries, ok[2] = res[2].([]any)
		held = res[3] == int64(1)
	}
	if ok != [3]bool{true, true, true} {
		err = fmt.Errorf("%w: events.lua replied %v", errBadRecord, res)
	}
	return last, maxDeleted, entries, held, err
}

// decodeEvent reads one XRANGE entry: {id, {field, value, ...}}.
func decodeEvent(raw any) (order.Event, error) {
	entry, _ := raw.([]any)
	var id string
	var fields []any
	if len(entry) == 2 {
		id, _ = entry[0].(string)
		fields, _ = entry[1].([]any)
	}
	at, ok := parseStreamID(id)
	if !ok || at.ms > math.MaxInt64 {
		return order.Event{}, fmt.Errorf("%w: event entry %v", errBadRecord, raw)
	}
	f := map[string]string{}
	for i := 0; i+1 < len(fields); i += 2 {
		k, _ := fields[i].(string)
		f[k], _ = fields[i+1].(string)
	}
	typ := order.EventType(f["type"])
	if !slices.Contains(order.EventTypes, typ) {
		return order.Event{}, fmt.Errorf("%w: event %s: type %q", errBadRecord, id, f["type"])
	}
	oid, err := parseID(f["id"])
	o := order.Order{}
	if err == nil {
		o, err = orderOf(oid, f["data"], f["status"])
	}
	if err != nil {
		return order.Event{}, fmt.Errorf("event %s: %w", id, err)
	}
	return order.Event{ID: id, Type: typ, Time: time.UnixMilli(int64(at.ms)).UTC(), Order: o}, nil
}

// streamID is a position in a stream: its entries' ids, ms-seq, ordered by ms then seq.
type streamID struct{ ms, seq uint64 }

// parseStreamID reads the whole form, ms-seq, in decimal.
func parseStreamID(s string) (id streamID, ok bool) {
	ms, seq, ok := strings.Cut(s, "-")
	var err1, err2 error
	id.ms, err1 = strconv.ParseUint(ms, 10, 64)
	id.seq, err2 = strconv.ParseUint(seq, 10, 64)
	return id, ok && err1 == nil && err2 == nil
}

func (a streamID) less(b streamID) bool { return a.ms < b.ms || (a.ms == b.ms && a.seq < b.seq) }

func (a streamID) String() string {
	return strconv.FormatUint(a.ms, 10) + "-" + strconv.FormatUint(a.seq, 10)
}

// waitBlock bounds each XREAD, so that the watch ends soon after the last waiter leaves.
const waitBlock = 2 * time.Second

// WaitForEvents returns nil once the newest position read is after after ("": any event), or
// at once for no position (the read tells why).
func (e *Events) WaitForEvents(ctx context.Context, after string) error {
	a, ok := parseStreamID(after)
	if !ok && after != "" {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	defer func() { e.waiters-- }()
	if e.waiters++; !e.running {
		e.running, e.newest = true, streamID{} // known only once read again
		go e.watch()
	}
	for !a.less(e.newest) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		moved := e.moved
		e.mu.Unlock()
		select {
		case <-moved:
		case <-ctx.Done():
		}
		e.mu.Lock()
	}
	return nil
}

// watch reads where the log stands, then blocks on XREAD after it, while anyone waits; read
// anew each time, as a log lost and begun again behind it would keep XREAD waiting.
func (e *Events) watch() {
	for pause := time.Duration(0); ; {
		e.mu.Lock()
		if e.waiters == 0 {
			e.running = false
			e.mu.Unlock()
			return
		}
		e.mu.Unlock()
		last, _, _, _, err := e.read(context.Background(), "", 0)
		if err == nil {
			e.mu.Lock()
			if e.newest.less(last) { // wake the waiters; one that went back (a lost log) is kept too
				close(e.moved)
				e.moved = make(chan struct{})
			}
			e.newest = last
			e.mu.Unlock()
			ctx, cancel := callContext(context.Background(), waitBlock+e.timeout)
			err = e.rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{e.k.ordersEvents, last.String()}, Count: 1, Block: waitBlock}).Err()
			cancel()
		}
		if err != nil && !errors.Is(err, redis.Nil) { // Nil: nothing within the block
			pause = min(max(2*pause, 50*time.Millisecond), time.Second)
			time.Sleep(pause)
		} else {
			pause = 0
		}
	}
}
