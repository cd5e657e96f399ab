package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/genv2"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/orderjson"
	"github.com/petstore/orderd/internal/ratelimit"
)

// Streams of the log (docs/design.md, "Order events"): each reads the log from its own
// position; one wait per instance tells them all when it moved.
const (
	heartbeatEvery = 15 * time.Second
	retryHint      = "retry: 2000\n\n" // how long an EventSource waits before reconnecting, in ms
	streamPageSize = 100
	// streamWriteTimeout bounds each write: a client that has read nothing of it for two
	// heartbeats has stopped reading, and its stream ends, giving back the key's place.
	streamWriteTimeout = 2 * heartbeatEvery
	// streamEndGrace is how long a stream told to end may take: past it, a write under way is
	// cut, and then the server's last chunk has as long again.
	streamEndGrace = time.Second
	// eventStreamType is a stream's Content-Type, by which observe tells a stream from a page.
	eventStreamType = "text/event-stream"
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
	keys         order.KeyStore
	limiter      ratelimit.Limiter
	obs          Observer
	logger       *slog.Logger
	max          int
	recheck      time.Duration // how often a stream checks its key
	writeTimeout time.Duration // streamWriteTimeout; shorter in tests
	closing      <-chan struct{}

	mu     sync.Mutex
	perKey map[string]int // streams open, by key name
	moved  chan struct{}  // closed at the log's next move; nil until a stream waits
}

func newStreams(cfg Config) *streams {
	return &streams{log: cfg.Events, keys: cfg.Keys, limiter: cfg.Limiter, obs: cfg.Observer, logger: cfg.Logger,
		max: cfg.MaxStreamsPerKey, recheck: cfg.StreamRecheck, writeTimeout: streamWriteTimeout, closing: cfg.Closing,
		perKey: map[string]int{}}
}

// asksForStream reports whether the request asks for a stream of the log, which holds one of
// its key's places from admission on (admit).
func asksForStream(ex *exchange) bool {
	m := ex.req.Method
	return ex.route == eventsRoute && (m == http.MethodGet || m == http.MethodHead) && acceptsEventStream(ex.req.Header)
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

// errTooManyStreams refuses a stream past its key's places on this instance.
func (s *streams) errTooManyStreams() error {
	return &problem{http.StatusTooManyRequests, gen.ErrorCodeTooManyStreams,
		fmt.Sprintf("this key holds %d streams open on this instance, as many as it may; close one first", s.max)}
}

// open starts a stream after q.After, or refuses it (410) before anything is sent. A HEAD
// makes the same checks and answers the stream's status and headers.
func (s *streams) open(ctx context.Context, q order.EventQuery, head bool) (genv2.ListEventsResponseObject, error) {
	q.Limit = streamPageSize
	moved := s.next() // before the read: a change after it wakes the stream
	first, err := s.log.Events(ctx, q)
	if err != nil {
		return nil, eventsError(q.After, err)
	}
	if head {
		return streamHead{}, nil
	}
	return &eventStream{streams: s, ctx: ctx, key: exchangeOf(ctx).key, q: q, page: first, moved: moved}, nil
}

// streamHead is a HEAD's answer where its GET would stream: the same status and headers.
type streamHead struct{}

func (streamHead) VisitListEventsResponse(w http.ResponseWriter) error {
	writeStreamHeader(w)
	return nil
}

func writeStreamHeader(w http.ResponseWriter) {
	w.Header().Set("Content-Type", eventStreamType)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}

// eventStream is one stream's answer: it writes until the client leaves, the log cannot be
// read (the client reconnects and learns why), the service shuts down or the key is refused.
type eventStream struct {
	*streams
	ctx   context.Context
	key   *order.Key
	q     order.EventQuery
	page  order.EventPage // read, not yet sent
	moved <-chan struct{} // closed at the log's next move
	ended chan struct{}   // closed by watch: the stream must end now
}

func (st *eventStream) VisitListEventsResponse(w http.ResponseWriter) error {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{}) // the server's deadlines bound a request; a stream lasts while its client reads
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
			if _, err := w.Write(buf); err != nil || rc.Flush() != nil {
				return nil // the client left, or watch cut the write
			}
			buf = buf[:0]
		}
		st.q.After = st.page.Last
		if st.over() { // on every turn, not only while waiting, which a stream catching up skips
			return nil
		}
		if !st.page.More {
			select {
			case <-st.moved:
			case <-heartbeat.C: // the log is read then too, in case a wake-up was missed
				buf = append(buf, ":\n\n"...)
			case <-st.ctx.Done():
				return nil
			case <-st.closing:
				return nil
			case <-st.ended:
				return nil
			}
		}
		st.moved = st.next()
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
	case <-st.closing:
	case <-st.ended:
	default:
		return false
	}
	return true
}

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
	defer context.AfterFunc(st.ctx, cancel)()
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

// appendMessage writes e as one server-sent event (WHATWG HTML, 9.2): its id, type and data.
func appendMessage(b []byte, e order.Event) []byte {
	b = append(append(append(append(b, "id: "...), e.ID...), "\nevent: "...), e.Type...)
	return append(orderjson.AppendEvent(append(b, "\ndata: "...), e), "\n\n"...)
}

// next is a channel closed at the log's next move. One goroutine per instance waits on the
// log for every stream (in Redis a blocking read holds a connection of the pool), started by
// the first stream.
func (s *streams) next() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.moved == nil {
		s.moved = make(chan struct{})
		go s.waitForEvents()
	}
	return s.moved
}

func (s *streams) waitForEvents() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-s.closing
		cancel()
	}()
	last := "" // the log's end when last read; "" until known
	for ctx.Err() == nil {
		var err error
		if last != "" {
			err = s.log.WaitForEvents(ctx, last) // which may return early
		}
		end := last
		if err == nil {
			end, err = s.log.LastEventID(ctx)
		}
		switch {
		case err != nil && ctx.Err() == nil:
			// The store is down: streams keep their heartbeats, and the wait is tried again.
			s.logger.Debug("event streams: waiting for the log", slog.String("error", err.Error()))
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		case err == nil && end != last: // the first read too: a stream may have read before it
			last = end
			s.mu.Lock()
			close(s.moved)
			s.moved = make(chan struct{})
			s.mu.Unlock()
		}
	}
}
