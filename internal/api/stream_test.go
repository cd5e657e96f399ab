package api

import (
	"testing"

	"github.com/petstore/orderd/internal/order"
)

// TestAMoveServesOnlyTheStreamsAtItsStart: the hub's page stands for a stream's own read only
// when the stream was where the hub was, and keeps the stream's types, Last and More.
func TestAMoveServesOnlyTheStreamsAtItsStart(t *testing.T) {
	page := order.EventPage{Last: "9", More: true, Events: []order.Event{
		{ID: "8", Type: order.EventCreated}, {ID: "9", Type: order.EventCancelled},
	}}
	m := &logMove{done: make(chan struct{}), from: "7", page: &page}
	if _, ok := m.pageAfter(order.EventQuery{After: "7", Limit: 100}); ok {
		t.Fatal("a move that has not happened served a page")
	}
	close(m.done)
	for _, tc := range []struct {
		q    order.EventQuery
		ok   bool
		want []string
	}{
		{order.EventQuery{After: "7", Limit: 100}, true, []string{"8", "9"}},
		{order.EventQuery{After: "7", Limit: 100, Types: []order.EventType{order.EventCancelled}}, true, []string{"9"}},
		{order.EventQuery{After: "6", Limit: 100}, false, nil}, // behind: reads the log
		{order.EventQuery{After: "7", Limit: 1}, false, nil},   // a smaller page than the hub's
	} {
		got, ok := m.pageAfter(tc.q)
		if ok != tc.ok {
			t.Fatalf("%+v: ok = %v", tc.q, ok)
		}
		var ids []string
		for _, e := range got.Events {
			ids = append(ids, e.ID)
		}
		if ok && (len(ids) != len(tc.want) || (len(ids) > 0 && ids[len(ids)-1] != tc.want[len(tc.want)-1]) || got.Last != "9" || !got.More) {
			t.Fatalf("%+v: %v Last %q More %v; want %v, 9, true", tc.q, ids, got.Last, got.More, tc.want)
		}
	}
	if _, ok := (&logMove{done: m.done, from: "7"}).pageAfter(order.EventQuery{After: "7", Limit: 100}); ok {
		t.Fatal("a move without a page (the hub could not read it) served one")
	}
}
