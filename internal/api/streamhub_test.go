package api

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/genv2"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/sqlitestore"
)

// testLog is a SQLite log holding the created events of orders 1 to n, all pending.
func testLog(tb testing.TB, n int) (*sqlitestore.Events, *sqlitestore.Orders) {
	tb.Helper()
	db, err := sqlitestore.Open(filepath.Join(tb.TempDir(), "orderd.db"), 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	orders := make([]order.Order, n)
	for i := range orders {
		orders[i] = order.Order{ID: int64(i + 1), PetID: 7, Quantity: 1, Status: order.StatusPending,
			ShipDate: time.Date(2026, 11, 20, 8, 30, 0, 0, time.UTC)}
	}
	pets := []order.Pet{{ID: 7, Name: "Rex", Status: order.PetAvailable}}
	if _, err := db.Import(context.Background(), orders, pets); err != nil {
		tb.Fatal(err)
	}
	return sqlitestore.NewEvents(db), sqlitestore.NewOrders(db)
}

// testStreams are the streams of log, one a key, sharing one wait as the service's do, ended by
// closing or by the test's end.
func testStreams(tb testing.TB, log order.EventLog, closing chan struct{}) *Server {
	tb.Helper()
	s := &Server{Config: &Config{Events: order.SharedWaits(log), MaxStreamsPerKey: 1, Closing: closing, StreamRecheck: time.Hour,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Observer: noObserver{}},
		perKey: map[string]int{}, writeTimeout: 2 * heartbeatEvery}
	tb.Cleanup(func() {
		select {
		case <-closing:
		default:
			close(closing)
		}
	})
	return s
}

// openStream opens a stream of s after after, as ListEvents does for a request with a valid key.
func openStream(s *Server, ctx context.Context, after string) (genv2.ListEventsResponseObject, error) {
	req := httptest.NewRequest(http.MethodGet, eventsRoute, nil)
	req.Header.Set("Accept", eventStreamType)
	ex := &exchange{Context: ctx, req: req, key: &order.Key{Name: "k"}}
	return (&ServerV2{v1: s}).ListEvents(ex, genv2.ListEventsRequestObject{Params: genv2.ListEventsParams{After: &after}})
}

var errGone = errors.New("the client left")

// heldClient is a client that reads each write only when the test lets it: Write hands its
// bytes to the test (wrote) and returns once the test reads them (read) or the client leaves.
type heldClient struct {
	h     http.Header
	wrote chan string
	read  chan struct{}
	gone  chan struct{}
}

func newHeldClient() *heldClient {
	return &heldClient{h: http.Header{}, wrote: make(chan string), read: make(chan struct{}), gone: make(chan struct{})}
}

func (c *heldClient) Header() http.Header { return c.h }
func (c *heldClient) WriteHeader(int)     {}
func (c *heldClient) Flush()              {}
func (c *heldClient) Write(p []byte) (int, error) {
	select {
	case c.wrote <- string(p):
	case <-c.gone:
		return 0, errGone
	}
	select {
	case <-c.read:
		return len(p), nil
	case <-c.gone:
		return 0, errGone
	}
}

// next is the stream's next write, not yet read.
func (c *heldClient) next(tb testing.TB, within time.Duration) string {
	tb.Helper()
	select {
	case p := <-c.wrote:
		return p
	case <-time.After(within):
		tb.Fatalf("no write within %v", within)
		return ""
	}
}

// serve runs st to c until it ends; the stream has ended when the channel closes, and it
// ends with the test (the client leaves).
func serve(tb testing.TB, st genv2.ListEventsResponseObject, c *heldClient) <-chan struct{} {
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		_ = st.VisitListEventsResponse(c)
	}()
	tb.Cleanup(func() {
		close(c.gone)
		<-ended
	})
	return ended
}

// cancel cancels order id, recording an event, and returns the event's position.
func cancel(tb testing.TB, log *sqlitestore.Events, orders *sqlitestore.Orders, id int64) string {
	tb.Helper()
	if _, changed, err := orders.Cancel(context.Background(), id); err != nil || !changed {
		tb.Fatalf("cancel %d: changed %v, %v", id, changed, err)
	}
	last, err := log.LastEventID(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return last
}

// waitFor waits until the streams' shared wait has seen the log move past after.
func waitFor(tb testing.TB, s *Server, after string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Events.WaitForEvents(ctx, after); err != nil {
		tb.Fatalf("the log did not move past %s within 5 s: %v", after, err)
	}
}

// TestMovesDuringAWriteAreAllSent: while a slow client reads one event, the log moves twice;
// once the client reads on, the stream sends both moves' events
// at once, not the second one at the next change or heartbeat (15 s).
func TestMovesDuringAWriteAreAllSent(t *testing.T) {
	log, orders := testLog(t, 3)
	s := testStreams(t, log, make(chan struct{}))
	from, err := log.LastEventID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st, err := openStream(s, t.Context(), from)
	if err != nil {
		t.Fatal(err)
	}
	c := newHeldClient()
	serve(t, st, c)
	if p := c.next(t, 5*time.Second); p != retryHint {
		t.Fatalf("first write %q, want the retry hint", p)
	}
	c.read <- struct{}{}

	first := cancel(t, log, orders, 1)
	if p := c.next(t, 5*time.Second); !strings.HasPrefix(p, "id: "+first+"\n") {
		t.Fatalf("write %q, want event %s", p, first)
	}
	// The client does not read it yet; meanwhile the log moves twice more, each move seen by the wait.
	last := first
	for _, id := range []int64{2, 3} {
		before := last
		last = cancel(t, log, orders, id)
		waitFor(t, s, before)
	}
	c.read <- struct{}{}

	var sent strings.Builder
	late := time.After(5 * time.Second) // a heartbeat would come at 15 s
	for !strings.Contains(sent.String(), "id: "+last+"\n") {
		select {
		case p := <-c.wrote:
			sent.WriteString(p)
			c.read <- struct{}{}
		case <-late:
			t.Fatalf("5 s on, the stream sent %q: event %s waits for the next change", sent.String(), last)
		}
	}
}

// TestClosingEndsAStreamCatchingUp: a stream sending a backlog, a page at a time with no
// wait between, ends at the service's closing instead of sending the next page.
func TestClosingEndsAStreamCatchingUp(t *testing.T) {
	log, _ := testLog(t, 3*streamPageSize)
	first, err := log.Events(t.Context(), order.EventQuery{After: "0", Limit: 1})
	if err != nil || len(first.Events) != 1 {
		t.Fatalf("the log's first event: %+v, %v", first, err)
	}
	closing := make(chan struct{})
	s := testStreams(t, log, closing)
	st, err := openStream(s, t.Context(), "0")
	if err != nil {
		t.Fatal(err)
	}
	c := newHeldClient()
	ended := serve(t, st, c)
	if p := c.next(t, 5*time.Second); !strings.Contains(p, "id: "+first.Events[0].ID+"\n") {
		t.Fatalf("first write %.200q, want the first page", p)
	}
	close(closing) // while the client reads the first page
	c.read <- struct{}{}
	select {
	case <-ended:
	case p := <-c.wrote:
		t.Fatalf("after closing, the stream wrote %.40q…", p)
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not end within 5 s of closing")
	}
}

// TestAClientThatStopsReadingLosesItsStream: a client that keeps its connection open but reads
// nothing more, over a real TCP connection, blocks the stream's write only until the write
// timeout; then the stream ends (and admit gives back the key's place).
func TestAClientThatStopsReadingLosesItsStream(t *testing.T) {
	log, _ := testLog(t, 20*streamPageSize) // far more than the small buffers below hold
	s := testStreams(t, log, make(chan struct{}))
	s.writeTimeout = 100 * time.Millisecond
	ended := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st, err := openStream(s, r.Context(), "0")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_ = st.VisitListEventsResponse(w)
		close(ended)
	}))
	srv.Config.ConnState = func(c net.Conn, state http.ConnState) {
		if state == http.StateNew {
			_ = c.(*net.TCPConn).SetWriteBuffer(4096) // the kernel's buffers fill soon
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close() // the client leaves at the end; until then it reads nothing
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: orderd\r\nAccept: text/event-stream\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("10 s on, the stream still writes to a client that stopped reading")
	}
}
