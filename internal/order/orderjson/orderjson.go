// Package orderjson writes orders and events as the contract's JSON, without reflection: the
// API's lists and event pages and the webhooks' bodies share these bytes, so they cannot differ.
package orderjson

import (
	"strconv"
	"time"

	"github.com/petstore/orderd/internal/order"
)

// AppendOrder writes o as encoding/json writes the contract's Order, byte for byte (tested in internal/api).
func AppendOrder(b []byte, o *order.Order) []byte {
	b = append(b, `{"complete":`...)
	b = strconv.AppendBool(b, o.Complete)
	b = append(b, `,"id":`...)
	b = strconv.AppendInt(b, o.ID, 10)
	b = append(b, `,"petId":`...)
	b = strconv.AppendInt(b, o.PetID, 10)
	b = append(b, `,"quantity":`...)
	b = strconv.AppendInt(b, int64(o.Quantity), 10)
	b = append(b, `,"shipDate":"`...)
	b = o.ShipDate.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","status":"`...)
	b = append(b, o.Status...) // one of three known words: nothing to escape
	return append(b, `"}`...)
}

// AppendEvent writes e as the contract's Event, on one line (an SSE data line takes it as is).
func AppendEvent(b []byte, e order.Event) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, e.ID...) // digits and '-': nothing to escape
	b = append(b, `","type":"`...)
	b = append(b, e.Type...) // one of four known words
	b = append(b, `","time":"`...)
	b = e.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","order":`...)
	b = AppendOrder(b, &e.Order)
	return append(b, '}')
}
