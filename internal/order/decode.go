package order

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
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
	err := decodeRecord("order", data, orderFields, &r.ID, &r.PetID, &r.Quantity, &shipDate, &r.Complete, (*string)(&r.Status))
	if err == nil {
		if r.ShipDate, err = parseShipDate(shipDate); err != nil {
			return fmt.Errorf("order %d: %w", r.ID, err)
		}
		*o = r
	}
	return err
}

// UnmarshalJSON reads the contract's Pet as Order's does an order.
func (p *Pet) UnmarshalJSON(data []byte) error {
	var r Pet
	err := decodeRecord("pet", data, petFields, &r.ID, &r.Name, (*string)(&r.Status))
	if err == nil {
		*p = r
	}
	return err
}

// The fields of the records, by their names in JSON; a record has maxFields at most.
var (
	orderFields = []string{"id", "petId", "quantity", "shipDate", "complete", "status"}
	petFields   = []string{"id", "name", "status"}
)

const maxFields = 6

// decodeRecord decodes the object data into to, where each of fields goes: an *int64,
// *int32, *bool or *string. It names the first field unknown or repeated, then mistyped,
// as written, then missing or null, in fields' order; each error begins with kind and, when
// the record has one valid id, its id (of its one member named "id" exactly).
func decodeRecord(kind string, data []byte, fields []string, to ...any) error {
	var values [maxFields][]byte // by field; nil: absent
	var written [maxFields]int   // fields, as written
	n, ids := 0, 0
	var err error
	if data[0] != '{' {
		err = errors.New("want a JSON object")
	}
	members(data, func(name, value []byte) {
		i := 0
		for i < len(fields) && fields[i] != string(name) {
			i++
		}
		switch {
		case i == len(fields):
			err = cmp.Or(err, fmt.Errorf("unknown field %q", name))
		case values[i] != nil:
			err = cmp.Or(err, fmt.Errorf("repeated field %q", name))
		default:
			values[i], written[n] = value, i
			n++
		}
		if string(name) == "id" {
			ids++
		}
	})
	for _, i := range written[:n] {
		if err == nil && string(values[i]) != "null" {
			if err = decodeValue(to[i], values[i]); err != nil {
				err = fmt.Errorf("%s: %w", fields[i], err)
			}
		}
	}
	for i, v := range values[:len(fields)] {
		if err == nil && v == nil {
			err = fmt.Errorf("%s missing", fields[i])
		} else if err == nil && string(v) == "null" {
			err = fmt.Errorf("%s: must not be null", fields[i])
		}
	}
	if err == nil {
		return nil
	}
	if id, perr := strconv.ParseInt(string(values[0]), 10, 64); ids == 1 && perr == nil {
		kind = fmt.Sprintf("%s %d", kind, id)
	}
	return fmt.Errorf("%s: %w", kind, err)
}

// decodeValue decodes the JSON value v, not null, into to, or says what v is instead, in
// encoding/json's words (an integer field names the number). The common values are read
// without encoding/json's reflection: an import reads millions.
func decodeValue(to any, v []byte) error {
	switch to := to.(type) {
	case *int64:
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			*to = n
			return nil
		}
	case *int32:
		if n, err := strconv.ParseInt(string(v), 10, 32); err == nil {
			*to = int32(n)
			return nil
		}
	case *bool:
		if v[0] == 't' || v[0] == 'f' {
			*to = v[0] == 't'
			return nil
		}
	case *string:
		if v[0] == '"' && bytes.IndexByte(v, '\\') < 0 && utf8.Valid(v) {
			*to = string(v[1 : len(v)-1])
			return nil
		}
	}
	var te *json.UnmarshalTypeError
	if err := json.Unmarshal(v, to); errors.As(err, &te) {
		return fmt.Errorf("want %s, got %s", wants[te.Type.String()], te.Value)
	} else {
		return err
	}
}

var wants = map[string]string{"int64": "an int64", "int32": "an int32", "bool": "true or false", "string": "a string"}

func parseShipDate(s string) (time.Time, error) {
	if n := utf8.RuneCountInString(s); n > MaxShipDateLength {
		return time.Time{}, fmt.Errorf("shipDate: %d characters, more than %d", n, MaxShipDateLength)
	}
	if fault := DateTimeFault(s); fault != "" {
		return time.Time{}, fmt.Errorf("shipDate: %q: %s", s, fault)
	}
	return time.Parse(time.RFC3339, s)
}

// members hands f the name and value of each member of the object data, valid JSON, in turn
// as written; data of another value has none.
func members(data []byte, f func(name, value []byte)) {
	if data[0] != '{' {
		return
	}
	for i := skipSpace(data, 1); data[i] != '}'; i = skipSpace(data, i+1) { // +1: the comma
		n := frame(data[i:])
		name := data[i+1 : i+n-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			var s string
			json.Unmarshal(data[i:i+n], &s)
			name = []byte(s)
		}
		i = skipSpace(data, skipSpace(data, i+n)+1) // +1: the colon
		n = frame(data[i:])
		f(name, data[i:i+n])
		if i = skipSpace(data, i+n); data[i] == '}' {
			break
		}
	}
}

// frame is the length of the valid JSON value b begins with: through its closing bracket or
// quote, or for a scalar up to the space or delimiter after it.
func frame(b []byte) int {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			for i++; b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1
			}
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth == 0 {
				return i
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case depth == 0 && (c == ',' || isSpace(c)):
			return i
		}
	}
	return len(b)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}
