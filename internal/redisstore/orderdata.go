package redisstore

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// orderData is an order in Redis, less its id (the field) and status (the other hash).
type orderData struct {
	PetID    int64     `json:"petId"`
	Quantity int32     `json:"quantity"`
	ShipDate time.Time `json:"shipDate"`
	Complete bool      `json:"complete"`
}

// decodeData reads an order's data. The form json.Marshal writes (the import's, and the
// layout's example) is read directly: a list of a million orders spent most of its time in
// encoding/json. Any other form goes to encoding/json, which decides.
func decodeData(raw string) (orderData, error) {
	if d, ok := parseData(raw); ok {
		return d, nil
	}
	var d orderData
	err := json.Unmarshal([]byte(raw), &d)
	return d, err
}

// parseData reads {"petId":N,"quantity":N,"shipDate":"RFC 3339","complete":B} exactly, with
// nothing between the tokens; ok is false for anything else, which FuzzParseData holds to
// encoding/json's reading.
func parseData(s string) (d orderData, ok bool) {
	s, ok = strings.CutPrefix(s, `{"petId":`)
	var q int64
	if ok {
		d.PetID, s, ok = cutInt(s, `,"quantity":`, 64)
	}
	if ok {
		q, s, ok = cutInt(s, `,"shipDate":"`, 32)
		d.Quantity = int32(q)
	}
	var date string
	if ok {
		date, s, ok = strings.Cut(s, `","complete":`)
	}
	if !ok || strings.ContainsAny(date, `\"`) || d.ShipDate.UnmarshalText([]byte(date)) != nil {
		return orderData{}, false
	}
	switch s {
	case "true}":
		d.Complete = true
	case "false}":
	default:
		return orderData{}, false
	}
	return d, true
}

// cutInt reads a JSON integer (no sign but '-', no leading zero) of bits up to sep.
func cutInt(s, sep string, bits int) (n int64, rest string, ok bool) {
	num, rest, ok := strings.Cut(s, sep)
	digits := strings.TrimPrefix(num, "-")
	if !ok || digits == "" || digits[0] < '0' || digits[0] > '9' || (digits[0] == '0' && len(digits) > 1) {
		return 0, "", false
	}
	n, err := strconv.ParseInt(num, 10, bits)
	return n, rest, err == nil
}
