package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/genv2"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/orderjson"
	"github.com/petstore/orderd/internal/ratelimit"
)

// Streams of the log (docs/design.md, "Order events"): each follows the log itself, from its
// own position; the hub only tells them when to read it again.
const (
	heartbeatEvery = 15 * time.Second
	retryHint      = "retry: 2000\n\n" // how long an EventSource waits before reconnecting, in ms
	streamPageSize = 100
	// streamWriteTimeout bounds each write: a client that has read nothing of it for two
	// heartbeats has stopped reading, and its stream ends, giving back the key's place.
	streamWriteTimeout = 2 * heartbeatEvery
)

// DefaultMaxStreamsPerKey is how many streams a key may hold open on one instance.
const DefaultMaxStreamsPerKey = 5

// DefaultStreamRecheck is how often an open stream checks that its key is still valid and not
// banned: a revoke or a ban ends the key's streams within it.
const DefaultStreamRecheck = heartbeatEvery

// streams are an instance's open streams: counted per key, ended when closing closes or when
// their key is revoked or banned.
type streams struct {
	log          order.EventLog
	hub          *eventHub
	max          int
	closing      <-chan struct{}
	logger       *slog.Logger
	obs          Observer
	keys         order.KeyStore
	limiter      ratelimit.Limiter
	recheck      time.Duration // how often a stream checks its key: DefaultStreamRecheck
	writeTimeout time.Duration // streamWriteTimeout; shorter in tests

	mu     sync.Mutex
	perKey map[string]int // streams open, by key name
}

func newStreams(cfg Config) *streams {
	return &streams{log: cfg.Events, hub: &eventHub{log: cfg.Events, closing: cfg.Closing, logger: cfg.Logger},
		max: cfg.MaxStreamsPerKey, closing: cfg.Closing, logger: cfg.Logger, obs: cfg.Observer,
		keys: cfg.Keys, limiter: cfg.Limiter, recheck: cfg.StreamRecheck,
		writeTimeout: streamWriteTimeout, perKey: map[string]int{}}
}

// asksForStream reports whether a request of route asks for a stream of the log, which holds
// one of its key's places from admission on (admit).
func asksForStream(route string, r *http.Request) bool {
	return route == eventsRoute && (r.Method == http.MethodGet || r.Method == http.MethodHead) && acceptsEventStream(r.Header)
}

// errTooManyStreams refuses a stream past its key's places on this instance. Its 429 counts in
// no window and carries no Retry-After: a place frees when one of the key's streams ends.
func (s *streams) errTooManyStreams() error {
	return &problem{http.StatusTooManyRequests, gen.ErrorCodeTooManyStreams,
		fmt.Sprintf("this key holds %d streams open on this instance, as many as it may; close one first", s.max)}
}

// open starts a stream after q.After, or refuses it (410) before anything is sent. A HEAD
// makes the same checks and answers the stream's status and headers. admit holds the key's
// place for the request's whole life.
func (s *streams) open(ctx context.Context, q order.EventQuery, head bool) (genv2.ListEventsResponseObject, error) {
	q.Limit = streamPageSize
	changed := s.hub.next() // before the read: a change after it wakes the stream
	first, err := s.log.Events(ctx, q)
	if err != nil {
		return nil, eventsError(q.After, err)
	}
	if head {
		return streamHead{}, nil
	}
	return &eventStream{streams: s, ctx: ctx, key: CallerFrom(ctx).Key, q: q, page: first, changed: changed}, nil
}

// streamHead is a HEAD's answer where its GET would stream: the same status and headers.
type streamHead struct{}

func (streamHead) VisitListEventsResponse(w http.ResponseWriter) error {
	writeStreamHeader(w)
	return nil
}

// eventStreamType is a stream's Content-Type, by which observe tells a stream from a page.
const eventStreamType = "text/event-stream"

func writeStreamHeader(w http.ResponseWriter) {
	w.Header().Set("Content-Type", eventStreamType)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}

func (s *streams) take(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perKey[key] >= s.max {
		return false
	}
	s.perKey[key]++
	s.obs.Streams(1)
	return true
}

func (s *streams) release(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perKey[key]--; s.perKey[key] <= 0 {
		delete(s.perKey, key)
	}
	s.obs.Streams(-1)
}

// eventStream is one stream's answer: it writes until the client leaves, the log cannot be
// read (the client reconnects and learns why), the service shuts down or the key is refused.
type eventStream struct {
	*streams
	ctx     context.Context
	key     *order.Key
	q       order.EventQuery
	page    order.EventPage // read, not yet sent
	changed *logMove        // closed at the log's next move
	ended   chan struct{}   // closed by watch: the stream must end now
}

func (st *eventStream) VisitListEventsResponse(w http.ResponseWriter) error {
	rc := http.NewResponseController(w)
	// The server's timeouts bound a request; a stream lasts as long as its client reads it.
	_ = rc.SetReadDeadline(time.Time{})
	st.ended = make(chan struct{})
	done := make(chan struct{})
	go st.watch(rc, done)
	defer func() {
		close(done)
		if st.over() { // the server's last chunk may not wait for a client that reads nothing
			_ = rc.SetWriteDeadline(time.Now().Add(streamEndGrace))
		}
	}()
	writeStreamHeader(w)
	heartbeat := time.NewTicker(heartbeatEvery)
	defer heartbeat.Stop()
	buf := []byte(retryHint)
	for {
		for _, e := range st.page.Events {
			buf = appendMessage(buf, e)
		}
		if len(buf) > 0 {
			_ = rc.SetWriteDeadline(time.Now().Add(st.writeTimeout)) // for the write and its flush
			if st.over() {
				return nil // watch's cut came before the deadline just set: it would undo it
			}
			if _, err := w.Write(buf); err != nil {
				return nil // the client left, or watch cut the write
			}
			if err := rc.Flush(); err != nil {
				return nil
			}
			buf = buf[:0]
		}
		st.q.After = st.page.Last
		if st.over() { // on every turn, not only in wait, which a stream catching up skips
			return nil
		}
		if !st.page.More && !st.wait(heartbeat.C, &buf) {
			return nil
		}
		moved := st.changed
		st.changed = st.hub.next() // before the read: a change after it wakes the stream
		// The hub's page holds only its own move: it stands for the stream's read when no
		// move came after it, and else the log is read, up to the move now waited on. (A
		// chain of moves would serve them too, but would let a stalled stream keep every
		// page the hub read since.)
		if st.changed.seq == moved.seq+1 {
			if page, ok := moved.pageAfter(st.q); ok {
				st.page = page // what the hub read, for every stream that was where it was
				continue
			}
		}
		var err error
		if st.page, err = st.log.Events(st.ctx, st.q); err != nil {
			if st.ctx.Err() == nil {
				st.logger.Warn("event stream ended: the log cannot be read", slog.String("error", err.Error()))
			}
			return nil
		}
	}
}

// over reports whether the stream must end: its client left, the service is closing, or
// watch ended it.
func (st *eventStream) over() bool {
	select {
	case <-st.ctx.Done():
		return true
	case <-st.closing:
		return true
	case <-st.ended:
		return true
	default:
		return false
	}
}

// streamEndGrace is how long a stream told to end may take to end cleanly: past it, a write
// under way is cut, and then the server's last chunk has as long again.
const streamEndGrace = time.Second

// watch ends the stream when the service shuts down, or when a check, every recheck, finds its
// key revoked or banned: it closes ended, and cuts a write still under way after
// streamEndGrace, which a client that reads nothing would otherwise hold for the write's whole
// timeout (and a shutdown with it).
func (st *eventStream) watch(rc *http.ResponseController, done <-chan struct{}) {
	tick := time.NewTicker(st.recheck)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-st.closing:
		case <-tick.C:
			if st.keyAllowed() {
				continue
			}
		}
		close(st.ended)
		select {
		case <-done:
		case <-time.After(streamEndGrace):
			_ = rc.SetWriteDeadline(time.Now())
		}
		return
	}
}

// keyAllowed reports whether the stream's key is still one and not banned. Only an answer
// that says so ends the stream: while the store cannot answer, the log's reads decide.
func (st *eventStream) keyAllowed() bool {
	// Not the request's context: its Trip would answer the key from what admission read.
	ctx, cancel := context.WithTimeout(context.Background(), st.recheck)
	defer cancel()
	stop := context.AfterFunc(st.ctx, cancel)
	defer stop()
	k, err := st.keys.Lookup(ctx, st.key.Hash)
	switch {
	case errors.Is(err, order.ErrKeyNotFound):
		st.logger.Info("event stream ended: its key was revoked", slog.String("key_name", st.key.Name))
		return false
	case err != nil:
		return true
	}
	d, err := st.limiter.Peek(ctx, ratelimit.KeyCaller(string(k.Hash)), k.Limits())
	if err == nil && d.Banned {
		st.logger.Info("event stream ended: its key is banned", slog.String("key_name", k.Name))
		return false
	}
	return true
}

// wait returns true when the log may have moved, or a heartbeat is due (written into buf;
// the log is read again then too, in case a wake-up was missed), and false when the stream ends.
func (st *eventStream) wait(heartbeat <-chan time.Time, buf *[]byte) bool {
	select {
	case <-st.changed.done:
		return true
	case <-heartbeat:
		*buf = append(*buf, ":\n\n"...)
		return true
	case <-st.ctx.Done():
	case <-st.closing:
	case <-st.ended:
	}
	return false
}

// appendMessage writes e as one server-sent event (WHATWG HTML, 9.2): its id, type and data.
func appendMessage(b []byte, e order.Event) []byte {
	b = append(b, "id: "...)
	b = append(b, e.ID...)
	b = append(b, "\nevent: "...)
	b = append(b, e.Type...)
	b = append(b, "\ndata: "...)
	b = orderjson.AppendEvent(b, e)
	return append(b, "\n\n"...)
}

// eventHub waits on the log for the whole instance, one wait however many streams are open,
// and wakes them all when it moves, with the events it read once for all of them.
type eventHub struct {
	log     order.EventLog
	closing <-chan struct{}
	logger  *slog.Logger

	mu      sync.Mutex
	cur     *logMove // the next move, closed when it happens
	started bool
}

// logMove is one move of the log: done closes when it happens; then from and page say what
// the hub read (page's events after from, every type), when it could.
type logMove struct {
	done chan struct{}
	seq  uint64 // one more than the move before it
	from string
	page *order.EventPage
}

// pageAfter is the page a stream at q would read, taken from the hub's: when the stream was
// where the hub was, it keeps the events of q's types, as the log would have.
func (m *logMove) pageAfter(q order.EventQuery) (order.EventPage, bool) {
	select {
	case <-m.done:
	default:
		return order.EventPage{}, false // a heartbeat: read the log
	}
	if m.page == nil || m.from != q.After || len(m.page.Events) > q.Limit {
		return order.EventPage{}, false
	}
	page := order.EventPage{Last: m.page.Last, More: m.page.More}
	for _, e := range m.page.Events {
		if len(q.Types) == 0 || slices.Contains(q.Types, e.Type) {
			page.Events = append(page.Events, e)
		}
	}
	return page, true
}

// next returns the log's next move after the call.
func (h *eventHub) next() *logMove {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.started {
		h.started, h.cur = true, &logMove{done: make(chan struct{})}
		go h.run()
	}
	return h.cur
}

// moved wakes every stream waiting for the move, telling them what the log holds after from.
func (h *eventHub) moved(from string, page *order.EventPage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cur.from, h.cur.page = from, page
	close(h.cur.done)
	h.cur = &logMove{done: make(chan struct{}), seq: h.cur.seq + 1}
}

func (h *eventHub) run() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-h.closing
		cancel()
	}()
	last := "" // the position the hub read up to; "" until it knows the log's end
	for ctx.Err() == nil {
		var err error
		if last == "" {
			if last, err = h.log.LastEventID(ctx); err == nil {
				h.moved("", nil) // a stream may have read before the hub knew the end: it reads again
			}
		} else if err = h.log.WaitForEvents(ctx, last); err == nil {
			var page order.EventPage
			page, err = h.log.Events(ctx, order.EventQuery{After: last, Limit: streamPageSize})
			switch {
			case errors.Is(err, order.ErrEventsExpired): // the hub fell behind the retention
				last, err = "", nil
			case err == nil && page.Last != last: // WaitForEvents may return early
				h.moved(last, &page)
				last = page.Last
			}
		}
		if err != nil && ctx.Err() == nil {
			// The store is down: streams keep their heartbeats, and the hub tries again.
			h.logger.Debug("event hub: waiting for the log", slog.String("error", err.Error()))
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}
