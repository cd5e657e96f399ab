package order

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/petstore/orderd/internal/jsonfile"
)

// MaxShipDateLength is the maxLength, in characters, of Order.shipDate in openapi.yaml.
const MaxShipDateLength = 64

// UnmarshalJSON reads the contract's Order: its six fields by their exact names, each once,
// none null, no other (an import would write a missing field's zero over a real order's, and
// encoding/json alone takes "Status" for status, and the last of two). Validate checks
// ranges and states. data is valid JSON, as encoding/json and jsonfile hand it.
func (o *Order) UnmarshalJSON(data []byte) error {
	var r Order
	var shipDate string
	err := decodeRecord(data, orderFields, &r.ID, &r.PetID, &r.Quantity, &shipDate, &r.Complete, (*string)(&r.Status))
	if err == nil {
		r.ShipDate, err = parseShipDate(shipDate)
	}
	if err != nil {
		return recordError("order", data, err)
	}
	*o = r
	return nil
}

// UnmarshalJSON reads the contract's Pet as Order's does an order.
func (p *Pet) UnmarshalJSON(data []byte) error {
	var r Pet
	if err := decodeRecord(data, petFields, &r.ID, &r.Name, (*string)(&r.Status)); err != nil {
		return recordError("pet", data, err)
	}
	*p = r
	return nil
}

// The fields of the records, by their names in JSON; a record has maxFields at most.
var (
	orderFields = []string{"id", "petId", "quantity", "shipDate", "complete", "status"}
	petFields   = []string{"id", "name", "status"}
)

const maxFields = 6

// decodeRecord decodes the object data into to, where each of fields goes: an *int64,
// *int32, *bool or *string. It names the first field unknown or repeated, then mistyped,
// as written, then missing or null, in fields' order.
func decodeRecord(data []byte, fields []string, to ...any) error {
	var values [maxFields][]byte // by field; nil: absent
	var written [maxFields]int   // fields, as written
	n := 0
	err := jsonfile.Members(data, func(name, value []byte) error {
		for i, f := range fields {
			if f != string(name) {
				continue
			}
			if values[i] != nil {
				return fmt.Errorf("repeated field %q", name)
			}
			values[i], written[n] = value, i
			n++
			return nil
		}
		return fmt.Errorf("unknown field %q", name)
	})
	if err != nil {
		return err
	}
	for _, i := range written[:n] {
		if string(values[i]) != "null" {
			if err := decodeValue(to[i], values[i]); err != nil {
				return fmt.Errorf("%s: %w", fields[i], err)
			}
		}
	}
	for i, v := range values[:len(fields)] {
		switch {
		case v == nil:
			return fmt.Errorf("%s missing", fields[i])
		case string(v) == "null":
			return fmt.Errorf("%s: must not be null", fields[i])
		}
	}
	return nil
}

// decodeValue decodes the JSON value v, not null, into to, or says, as encoding/json would,
// what v is instead: an integer field names the number.
func decodeValue(to any, v []byte) error {
	var want string
	var number bool
	switch to := to.(type) {
	case *int64:
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err == nil {
			*to = n
			return nil
		}
		want, number = "an int64", true
	case *int32:
		n, err := strconv.ParseInt(string(v), 10, 32)
		if err == nil {
			*to = int32(n)
			return nil
		}
		want, number = "an int32", true
	case *bool:
		if v[0] == 't' || v[0] == 'f' {
			*to = v[0] == 't'
			return nil
		}
		want = "true or false"
	case *string:
		if v[0] == '"' && bytes.IndexByte(v, '\\') < 0 && utf8.Valid(v) {
			*to = string(v[1 : len(v)-1])
			return nil
		}
		if v[0] == '"' { // escapes, or bytes that are not UTF-8
			var s string
			err := json.Unmarshal(v, &s)
			*to = s
			return err
		}
		want = "a string"
	}
	got := "number"
	switch v[0] {
	case '"':
		got = "string"
	case '{':
		got = "object"
	case '[':
		got = "array"
	case 't', 'f':
		got = "bool"
	default:
		if number {
			got += " " + string(v)
		}
	}
	return fmt.Errorf("want %s, got %s", want, got)
}

// recordError prefixes err with the record's kind and, when it has a valid one, its id: the
// value of its one member named "id" exactly (not of "ID", nor of either of two "id").
func recordError(kind string, data []byte, err error) error {
	var ids int
	var id []byte
	jsonfile.Members(data, func(name, value []byte) error {
		if string(name) == "id" {
			ids, id = ids+1, value
		}
		return nil
	})
	if n, perr := strconv.ParseInt(string(id), 10, 64); ids == 1 && perr == nil {
		return fmt.Errorf("%s %d: %w", kind, n, err)
	}
	return fmt.Errorf("%s: %w", kind, err)
}

func parseShipDate(s string) (time.Time, error) {
	if n := utf8.RuneCountInString(s); n > MaxShipDateLength {
		return time.Time{}, fmt.Errorf("shipDate: %d characters, more than %d", n, MaxShipDateLength)
	}
	if fault := DateTimeFault(s); fault != "" {
		return time.Time{}, fmt.Errorf("shipDate: %q: %s", s, fault)
	}
	return time.Parse(time.RFC3339, s)
}
