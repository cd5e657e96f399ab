package api

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/genv2"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/orderjson"
	"github.com/petstore/orderd/internal/ratelimit"
)

const eventsRoute = BasePathV2 + "/store/events"

// Streams of the log (docs/design.md, "Order events").
const (
	heartbeatEvery  = 15 * time.Second
	retryHint       = "retry: 2000\n\n"   // how long an EventSource waits before reconnecting, in ms
	streamPageSize  = 100                 // whatever pageSize says
	eventStreamType = "text/event-stream" // by which the header hook tells a stream from a page
	streamEndGrace  = time.Second         // for a stream told to end: then its write is cut, and its last chunk has as long
	// Streams a key may hold open on one instance; how often a stream checks its key is neither revoked nor banned.
	DefaultMaxStreamsPerKey = 5
	DefaultStreamRecheck    = heartbeatEvery
)

// ListEvents answers a page of the log of order events, or a stream when Accept asks for one.
func (s *ServerV2) ListEvents(ctx context.Context, req genv2.ListEventsRequestObject) (genv2.ListEventsResponseObject, error) {
	p, r := req.Params, ctx.(*exchange).req
	q := order.EventQuery{After: deref(p.After), Limit: cmp.Or(int(deref(p.PageSize)), defaultPageSize)}
	for _, t := range deref(p.Type) {
		q.Types = append(q.Types, order.EventType(t))
	}
	stream := acceptsEventStream(r.Header)
	if stream { // Last-Event-ID: what an EventSource sends when it reconnects
		q.After, q.Limit = cmp.Or(deref(p.LastEventID), q.After), streamPageSize
	}
	page, err := s.v1.Events.Events(ctx, q)
	if err != nil && q.After != "" {
		err = fmt.Errorf("after %s: %w", q.After, err) // the position a refusal (410) is about
	}
	if err != nil {
		return nil, err
	}
	if stream { // refused before anything is sent, or started; a HEAD too
		return &eventStream{Server: s.v1, ctx: ctx, key: ctx.(*exchange).key, q: q, page: page, head: r.Method == http.MethodHead}, nil
	}
	b := append(make([]byte, 0, 256*len(page.Events)+64), `{"events":[`...)
	for _, e := range page.Events {
		b = append(orderjson.AppendEvent(b, e), ',')
	}
	b = append(append(bytes.TrimSuffix(b, []byte(",")), `],"lastEventId":"`...), page.Last...) // digits and '-': nothing to escape
	e := &encoded{body: append(b, "\"}\n"...), contentType: echo.MIMEApplicationJSON}
	if page.More {
		e.link = nextLink("/store/events", r.URL.RawQuery, []string{"type", "pageSize"}, "after", page.Last)
	}
	return answer{e, r}, nil // plain and never cached: each reads the log's end
}

// acceptsEventStream reports whether Accept weights text/event-stream above 0 (RFC 9110 §12.4.2).
func acceptsEventStream(h http.Header) bool {
	return weight(h.Values(echo.HeaderAccept), eventStreamType) > 0
}

// holdStream counts n (1 or -1) of key's streams, refusing a place past MaxStreamsPerKey.
func (s *Server) holdStream(key string, n int) bool {
	s.streamsMu.Lock()
	defer s.streamsMu.Unlock()
	if n > 0 && s.perKey[key] >= s.MaxStreamsPerKey {
		return false
	}
	if s.perKey[key] += n; s.perKey[key] <= 0 {
		delete(s.perKey, key)
	}
	s.Observer.Streams(n)
	return true
}

// eventStream writes until the client leaves, the log fails (a reconnect learns why), shutdown or the key is refused.
type eventStream struct {
	*Server
	ctx  context.Context // the request's; watch's once the stream is open
	key  *order.Key
	q    order.EventQuery
	page order.EventPage // read, not yet sent
	head bool
}

func (st *eventStream) VisitListEventsResponse(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", eventStreamType) // and the header hook adds Cache-Control: no-store
	if st.head {
		w.WriteHeader(http.StatusOK)
		return nil
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{}) // the server's deadlines bound a request; a stream lasts while its client reads
	ctx, end := context.WithCancel(st.ctx)
	st.ctx = ctx
	done := make(chan struct{})
	go st.watch(rc, end, done)
	defer func() {
		close(done)
		if ctx.Err() != nil { // the server's last chunk may not wait for a client that reads nothing
			_ = rc.SetWriteDeadline(time.Now().Add(streamEndGrace))
		}
	}()
	w.WriteHeader(http.StatusOK)
	buf := []byte(retryHint)
	for {
		for _, e := range st.page.Events { // as server-sent events (WHATWG HTML §9.2)
			buf = append(append(append(append(buf, "id: "...), e.ID...), "\nevent: "...), e.Type...)
			buf = append(orderjson.AppendEvent(append(buf, "\ndata: "...), e), "\n\n"...)
		}
		if len(buf) > 0 {
			_ = rc.SetWriteDeadline(time.Now().Add(st.writeTimeout)) // for the write and its flush
			if ctx.Err() != nil {
				return nil // watch's cut came before the deadline just set: it would undo it
			}
			if _, err := w.Write(buf); err != nil || rc.Flush() != nil {
				return nil // the client left, or watch cut the write
			}
			buf = buf[:0]
		}
		st.q.After = st.page.Last
		if !st.page.More { // the instance's one wait (service.go: order.SharedWaits)
			wait, stop := context.WithTimeout(ctx, heartbeatEvery)
			if st.Events.WaitForEvents(wait, st.q.After) != nil && ctx.Err() == nil {
				buf = append(buf, ":\n\n"...) // and the log is read again
			}
			stop()
		}
		select { // on every turn, not only while waiting, which a stream catching up skips
		case <-st.Closing:
			return nil
		default:
			if ctx.Err() != nil {
				return nil
			}
		}
		var err error
		if st.page, err = st.Events.Events(ctx, st.q); err != nil {
			if ctx.Err() == nil {
				st.Logger.Warn("event stream ended: the log cannot be read", slog.String("error", err.Error()))
			}
			return nil
		}
	}
}

// watch ends the stream at shutdown or when a recheck refuses its key, then cuts a write a client does not read.
func (st *eventStream) watch(rc *http.ResponseController, end context.CancelFunc, done <-chan struct{}) {
	tick := time.NewTicker(st.StreamRecheck)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-st.ctx.Done():
		case <-st.Closing:
		case <-tick.C:
			if st.keyAllowed() {
				continue
			}
		}
		end()
		select {
		case <-done:
		case <-time.After(streamEndGrace):
			_ = rc.SetWriteDeadline(time.Now())
		}
		return
	}
}

// keyAllowed is false only when the store says the key is gone or banned.
func (st *eventStream) keyAllowed() bool {
	ctx, cancel := context.WithTimeout(context.Background(), st.StreamRecheck) // not the request's: its Trip knows the key
	defer cancel()
	defer context.AfterFunc(st.ctx, cancel)()
	k, err := st.Keys.Lookup(ctx, st.key.Hash)
	switch {
	case errors.Is(err, order.ErrKeyNotFound):
		st.Logger.Info("event stream ended: its key was revoked", slog.String("key_name", st.key.Name))
		return false
	case err != nil:
		return true
	}
	d, err := st.Limiter.Peek(ctx, ratelimit.KeyCaller(string(k.Hash)), k.Limits())
	if err == nil && d.Banned {
		st.Logger.Info("event stream ended: its key is banned", slog.String("key_name", k.Name))
		return false
	}
	return true
}
