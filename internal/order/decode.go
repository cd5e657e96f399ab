package order

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// MaxShipDateLength is the maxLength, in characters, of Order.shipDate in openapi.yaml.
const MaxShipDateLength = 64

// UnmarshalJSON reads the contract's Order: its six fields by their exact names, each once,
// none null, no other (an import would write a missing field's zero over a real order's, and
// encoding/json alone takes "Status" for status, and the last of two). Validate checks
// ranges and states. data is valid JSON, as encoding/json and jsonfile hand it.
func (o *Order) UnmarshalJSON(data []byte) error {
	var r Order
	var date string
	if err := decodeRecord("order", data, orderFields, &r.ID, &r.PetID, &r.Quantity, &date, &r.Complete, (*string)(&r.Status)); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(date); n > MaxShipDateLength {
		return fmt.Errorf("order %d: shipDate: %d characters, more than %d", r.ID, n, MaxShipDateLength)
	}
	if fault := DateTimeFault(date); fault != "" {
		return fmt.Errorf("order %d: shipDate: %q: %s", r.ID, date, fault)
	}
	var err error
	if r.ShipDate, err = time.Parse(time.RFC3339, date); err == nil {
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
// *int32, *bool or *string. It names the first field unknown or repeated, as written, then
// the first missing, null or mistyped, in fields' order; each error begins with kind and,
// when the record has one valid id, its id (of its one member named "id" exactly).
func decodeRecord(kind string, data []byte, fields []string, to ...any) error {
	var values [maxFields][]byte // by field; nil: absent
	var err error
	ids := 0
	d := decoders.Get().(*decoder)
	defer decoders.Put(d)
	d.in.Reset(data)
	d.Reset(&d.in, decoderOptions...)
	if tok, _ := d.ReadToken(); tok.Kind() != '{' {
		return fmt.Errorf("%s: want a JSON object", kind)
	}
	for d.PeekKind() == '"' {
		quoted := d.next(data)
		name := quoted[1 : len(quoted)-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			name, _ = jsontext.AppendUnquote(nil, quoted)
		}
		value := d.next(data)
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
			values[i] = value
		}
		if string(name) == "id" {
			ids++
		}
	}
	for i, v := range values[:len(fields)] {
		switch {
		case err != nil:
		case v == nil:
			err = fmt.Errorf("%s missing", fields[i])
		case string(v) == "null":
			err = fmt.Errorf("%s: must not be null", fields[i])
		default:
			if err = decodeValue(to[i], v); err != nil {
				err = fmt.Errorf("%s: %w", fields[i], err)
			}
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

// decoder reads a record's members; decoders keeps them for the next: an import reads millions.
type decoder struct {
	jsontext.Decoder
	in bytes.Reader
}

var (
	decoders       = sync.Pool{New: func() any { return new(decoder) }}
	decoderOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}
)

// next is the next value the decoder reads from data, as data has it.
func (d *decoder) next(data []byte) []byte {
	v, _ := d.ReadValue()
	end := d.InputOffset()
	return data[end-int64(len(v)) : end]
}
