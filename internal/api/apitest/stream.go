package apitest

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Stream is a stream of order events as a client reads it; what it read is checked against
// the contract when it closes.
type Stream struct {
	req  *http.Request
	res  *http.Response
	r    *bufio.Reader
	read strings.Builder
	stop context.CancelFunc
}

// Message is one server-sent event; Retry is the stream's first, the reconnection hint.
type Message struct{ ID, Event, Data, Retry string }

// OpenStream sends req (a GET of the events, its Accept set here) with client, for at most
// 30 s. A 200 is a Stream; any other answer is checked against the contract and returned with
// its body, read, and a nil Stream.
func (c *Contract) OpenStream(tb testing.TB, client *http.Client, req *http.Request) (*Stream, *http.Response, []byte) {
	tb.Helper()
	ctx, stop := context.WithTimeout(req.Context(), 30*time.Second)
	req = req.WithContext(ctx)
	req.Header.Set("Accept", "text/event-stream")
	res, err := client.Do(req)
	if err != nil {
		stop()
		tb.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	s := &Stream{req: req, res: res, r: bufio.NewReader(res.Body), stop: stop}
	tb.Cleanup(func() { s.stop(); res.Body.Close() })
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(res.Body)
		if err := c.Check(req, res, body); err != nil {
			tb.Errorf("%s %s → %d breaks the contract: %v", req.Method, req.URL, res.StatusCode, err)
		}
		return nil, res, body
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		tb.Fatalf("%s %s: 200 with Content-Type %q", req.Method, req.URL, ct)
	}
	return s, res, nil
}

// Next reads up to the next message, skipping comments (heartbeats).
func (s *Stream) Next(tb testing.TB) Message {
	tb.Helper()
	var m Message
	for {
		line, err := s.r.ReadString('\n')
		s.read.WriteString(line)
		if err != nil {
			tb.Fatalf("the stream ended before a message: %v", err)
		}
		line = strings.TrimSuffix(line, "\n")
		name, value, _ := strings.Cut(line, ": ")
		switch {
		case line == "" && m != (Message{}):
			return m
		case strings.HasPrefix(line, ":"):
		case name == "id":
			m.ID = value
		case name == "event":
			m.Event = value
		case name == "data":
			m.Data = value
		case name == "retry":
			m.Retry = value
		}
	}
}

// NextWithin is Next, failing when no message comes within d.
func (s *Stream) NextWithin(tb testing.TB, d time.Duration) Message {
	tb.Helper()
	late := time.AfterFunc(d, s.stop)
	defer late.Stop()
	return s.Next(tb)
}

// Close ends the stream from the client's side and checks what it read against the contract.
func (s *Stream) Close(tb testing.TB, c *Contract) {
	tb.Helper()
	s.stop()
	s.res.Body.Close()
	if err := c.Check(s.req, s.res, []byte(s.read.String())); err != nil {
		tb.Errorf("the stream breaks the contract: %v", err)
	}
}

// ReadToEnd reads until the server ends the stream, and fails unless it ends cleanly.
func (s *Stream) ReadToEnd(tb testing.TB) {
	tb.Helper()
	if _, err := io.Copy(io.Discard, s.r); err != nil {
		tb.Fatalf("the stream did not end cleanly: %v", err)
	}
}
