package order

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxShipDateLength is the maxLength, in characters, of Order.shipDate in openapi.yaml.
const MaxShipDateLength = 64

// UnmarshalJSON reads the contract's Order: all six fields, none null, no other (an import
// would write a missing field's zero over a real order's). Validate checks ranges and states.
func (o *Order) UnmarshalJSON(data []byte) error {
	if p, ok := plainOrder(data); ok {
		*o = p
		return nil
	}
	return o.decode(data)
}

// decode is UnmarshalJSON without its fast path.
func (o *Order) decode(data []byte) error {
	var r struct {
		ID       *int64  `json:"id"`
		PetID    *int64  `json:"petId"`
		Quantity *int32  `json:"quantity"`
		ShipDate *string `json:"shipDate"`
		Complete *bool   `json:"complete"`
		Status   *Status `json:"status"`
	}
	err := decodeObject(data, &r)
	var shipDate time.Time
	if err == nil {
		shipDate, err = parseShipDate(*r.ShipDate)
	}
	if err != nil {
		return recordError("order", data, err)
	}
	*o = Order{ID: *r.ID, PetID: *r.PetID, Quantity: *r.Quantity, ShipDate: shipDate, Complete: *r.Complete, Status: *r.Status}
	return nil
}

// UnmarshalJSON reads the contract's Pet as Order's does an order.
func (p *Pet) UnmarshalJSON(data []byte) error {
	var r struct {
		ID     *int64     `json:"id"`
		Name   *string    `json:"name"`
		Status *PetStatus `json:"status"`
	}
	if err := decodeObject(data, &r); err != nil {
		return recordError("pet", data, err)
	}
	*p = Pet{ID: *r.ID, Name: *r.Name, Status: *r.Status}
	return nil
}

// decodeObject decodes data into v, pointer fields only, naming a field unknown, repeated,
// mistyped or missing. A name is a field's only if it is its tag exactly: encoding/json alone
// would also take "ID" or "Status" for one, and the last of a repeated one, so that a record
// could say one thing and import another.
func decodeObject(data []byte, v any) error {
	if len(data) == 0 || data[0] != '{' {
		return errors.New("want a JSON object")
	}
	fields := reflect.ValueOf(v).Elem()
	if json.Valid(data) { // else the decoder names the fault
		names := make([]string, fields.NumField())
		for i := range names {
			names[i] = fields.Type().Field(i).Tag.Get("json")
		}
		var seen uint64 // by field index; records have far fewer than 64 fields
		err := eachName(data, func(name []byte) error {
			i := slices.Index(names, string(name))
			switch {
			case i < 0:
				return fmt.Errorf("unknown field %q", name)
			case seen&(1<<i) != 0:
				return fmt.Errorf("repeated field %q", name)
			}
			seen |= 1 << i
			return nil
		})
		if err != nil {
			return err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return fmt.Errorf("%s: want %s, got %s", te.Field, jsonTypes[te.Type.Kind()], te.Value)
	case err != nil:
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	for i := range fields.NumField() {
		if fields.Field(i).IsNil() {
			return missing(data, fields.Type().Field(i).Tag.Get("json"))
		}
	}
	return nil
}

// eachName hands f the name of each member of the object data, valid JSON, in turn as it is
// written: a repeated name each time (a map would keep one). It stops at f's first error.
// (Decoder.Token would do, at three times the cost of all the rest of decodeObject.)
func eachName(data []byte, f func(name []byte) error) error {
	depth, isName := 0, false // isName: the next string is a member's name
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{':
			depth++
			isName = depth == 1
		case '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			isName = depth == 1
		case '"':
			start := i
			for i++; data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
			if !isName {
				continue
			}
			isName = false
			name := data[start+1 : i]
			if bytes.IndexByte(name, '\\') >= 0 {
				var s string
				json.Unmarshal(data[start:i+1], &s)
				name = []byte(s)
			}
			if err := f(name); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonTypes names, in the contract's words, the JSON values of the kinds records' fields have.
var jsonTypes = map[reflect.Kind]string{
	reflect.Int64: "an int64", reflect.Int32: "an int32", reflect.Bool: "true or false", reflect.String: "a string",
}

// missing is the error of a field that decoded to nil: absent, or null.
func missing(data []byte, field string) error {
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) == nil && fields[field] != nil {
		return fmt.Errorf("%s: must not be null", field)
	}
	return fmt.Errorf("%s missing", field)
}

// recordError prefixes err with the record's kind and, when it has a valid one, its id: the
// value of its one member named "id" exactly (not of "ID", nor of either of two "id").
func recordError(kind string, data []byte, err error) error {
	ids := 0
	var fields map[string]json.RawMessage // exact names; of a repeated one, the last value
	if json.Unmarshal(data, &fields) == nil {
		eachName(data, func(name []byte) error {
			if string(name) == "id" {
				ids++
			}
			return nil
		})
	}
	var id *int64
	if ids != 1 || json.Unmarshal(fields["id"], &id) != nil || id == nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	return fmt.Errorf("%s %d: %w", kind, *id, err)
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
