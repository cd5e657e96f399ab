package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/genv2"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/orderjson"
)

// eventsRoute is listEvents' route, which answers a page or a stream as Accept asks.
const eventsRoute = BasePathV2 + "/store/events"

// ListEvents answers a page of the log of order events, or, when the client asks for
// text/event-stream, follows it (stream.go).
func (s *ServerV2) ListEvents(ctx context.Context, req genv2.ListEventsRequestObject) (genv2.ListEventsResponseObject, error) {
	p, r := req.Params, exchangeOf(ctx).req
	q := order.EventQuery{Limit: defaultPageSize}
	if p.After != nil {
		q.After = *p.After
	}
	if p.Type != nil {
		for _, t := range *p.Type {
			q.Types = append(q.Types, order.EventType(t))
		}
	}
	if p.PageSize != nil {
		q.Limit = int(*p.PageSize)
	}
	if acceptsEventStream(r.Header) {
		if p.LastEventID != nil { // what an EventSource sends when it reconnects
			q.After = *p.LastEventID
		}
		return s.streams.open(ctx, q, r.Method == http.MethodHead)
	}
	page, err := s.events.Events(ctx, q)
	if err != nil {
		return nil, eventsError(q.After, err)
	}
	e := &encoded{body: appendEventPage(make([]byte, 0, 256*len(page.Events)+64), page), contentType: echo.MIMEApplicationJSON}
	if page.More {
		e.link = nextLink("/store/events", r.URL.RawQuery, []string{"type", "pageSize"}, "after", page.Last)
	}
	return answer{e, r}, nil // plain and never cached: each reads the log's end
}

// eventsError names the position a refusal is about.
func eventsError(after string, err error) error {
	if after == "" {
		return err
	}
	return fmt.Errorf("after %s: %w", after, err)
}

// acceptsEventStream reports whether Accept names text/event-stream with a weight above 0,
// read by qvalue as Accept-Encoding's are: "0", "0." and "0.00" are all 0 (RFC 9110 §12.4.2).
func acceptsEventStream(h http.Header) bool {
	return weight(h.Values(echo.HeaderAccept), func(m string) bool { return strings.EqualFold(m, eventStreamType) }) > 0
}

// appendEventPage writes the EventPage of page.
func appendEventPage(b []byte, page order.EventPage) []byte {
	b = append(b, `{"events":[`...)
	for i, e := range page.Events {
		if i > 0 {
			b = append(b, ',')
		}
		b = orderjson.AppendEvent(b, e)
	}
	b = append(append(b, `],"lastEventId":"`...), page.Last...) // digits and '-': nothing to escape
	return append(b, "\"}\n"...)
}
