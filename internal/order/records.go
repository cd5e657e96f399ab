package order

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// UnmarshalJSON reads the contract's Order from valid JSON: its six fields by their exact
// names, each once, none null, no other (an import writes every field). Validate checks values.
func (o *Order) UnmarshalJSON(data []byte) error {
	var r Order
	var date string
	if err := decodeRecord("order", data, orderFields[:], &r.ID, &r.PetID, &r.Quantity, &date, &r.Complete, (*string)(&r.Status)); err != nil {
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

// UnmarshalJSON reads the contract's Pet as Order's reads an order.
func (p *Pet) UnmarshalJSON(data []byte) error {
	var r Pet
	err := decodeRecord("pet", data, petFields[:], &r.ID, &r.Name, (*string)(&r.Status))
	if err == nil {
		*p = r
	}
	return err
}

// The fields of the records, by their names in JSON.
var (
	orderFields = [...]string{"id", "petId", "quantity", "shipDate", "complete", "status"}
	petFields   = [...]string{"id", "name", "status"}
)

// decodeRecord decodes the object data into to (*int64, *int32, *bool or *string), a field of
// fields each. It names the first field unknown or repeated, as written, then the first
// missing, null or mistyped, in fields' order, after kind and the record's one valid id.
func decodeRecord(kind string, data []byte, fields []string, to ...any) error {
	var values [len(orderFields)][]byte // by field (an order's are the most); nil: absent
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
		i := slices.IndexFunc(fields, func(f string) bool { return f == string(name) })
		switch {
		case i < 0:
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

// decodeValue decodes the JSON value v, not null, into to, or says in encoding/json's words what v is instead.
func decodeValue(to any, v []byte) error {
	var ok bool
	var want string
	switch to := to.(type) {
	case *int64:
		n, err := strconv.ParseInt(string(v), 10, 64)
		*to, ok, want = n, err == nil, "an int64"
	case *int32:
		n, err := strconv.ParseInt(string(v), 10, 32)
		*to, ok, want = int32(n), err == nil, "an int32"
	case *bool:
		*to, ok, want = v[0] == 't', v[0] == 't' || v[0] == 'f', "true or false"
	case *string:
		u, _ := jsontext.AppendUnquote(nil, v) // invalid UTF-8 as U+FFFD, as encoding/json
		*to, ok, want = string(u), v[0] == '"', "a string"
	}
	if ok {
		return nil
	}
	got := map[byte]string{'"': "string", 't': "bool", 'f': "bool", '{': "object", '[': "array"}[v[0]]
	switch {
	case got == "" && want[:6] == "an int":
		got = "number " + string(v)
	case got == "":
		got = "number"
	}
	return fmt.Errorf("want %s, got %s", want, got)
}

// decoder reads a record's members; decoders keeps them: an import reads millions.
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

// DateTimeShape tells a client what an RFC 3339 date-time looks like.
const DateTimeShape = "must be an RFC 3339 date-time, such as 2026-11-16T00:00:00Z"

// DateTimeFault says why s is not an RFC 3339 date-time (upper-case T and Z, a day that exists, no leap second),
// or "": kin-openapi and time.Parse let some through. Read by hand, not by a regexp: an import checks millions.
func DateTimeFault(s string) string {
	zone := len("2006-01-02T15:04:05") // where the offset starts, after a fraction if any
	if shaped(s, zone, ".9") {
		for zone += 2; shaped(s, zone, "9"); zone++ {
		}
	}
	offset := s[min(zone, len(s)):]
	if !shaped(s, 0, "9999-99-99T99:99:99") || offset != "Z" && !shaped(offset, 0, "+99:99") && !shaped(offset, 0, "-99:99") ||
		len(offset) > len("+99:99") {
		return DateTimeShape
	}
	n := func(i int) int { return int(s[i]-'0')*10 + int(s[i+1]-'0') }
	year, month, day, hour, minute, second := n(0)*100+n(2), time.Month(n(5)), n(8), n(11), n(14), n(17)
	days := time.Date(year, month+1, 0, 0, 0, 0, 0, time.UTC).Day()
	switch {
	case offset != "Z" && (n(zone+1) > 23 || n(zone+4) > 59):
		return fmt.Sprintf("offset %s is out of range: hours 00 to 23, minutes 00 to 59", offset)
	case month < 1 || month > 12:
		return fmt.Sprintf("month %02d does not exist", month)
	case day < 1 || day > days:
		return fmt.Sprintf("%s %04d has no day %02d: it has %d days", month, year, day, days)
	case hour > 23:
		return fmt.Sprintf("hour %02d is out of range: 00 to 23", hour)
	case minute > 59:
		return fmt.Sprintf("minute %02d is out of range: 00 to 59", minute)
	case second == 60:
		return "second 60 (a leap second) is not accepted: seconds are 00 to 59"
	case second > 59:
		return fmt.Sprintf("second %02d is out of range: 00 to 59", second)
	}
	return ""
}

// shaped reports whether s has pattern at i, where a 9 of pattern is any ASCII digit.
func shaped(s string, i int, pattern string) bool {
	if i > len(s) || len(s)-i < len(pattern) {
		return false
	}
	for j := range len(pattern) {
		if c := s[i+j]; pattern[j] == '9' && (c < '0' || c > '9') || pattern[j] != '9' && c != pattern[j] {
			return false
		}
	}
	return true
}

// Record is what the service imports: an order or a pet.
type Record interface {
	Order | Pet
	Validate() error
	identity() (kind string, id int64)
}

func (o Order) identity() (string, int64) { return "order", o.ID }
func (p Pet) identity() (string, int64)   { return "pet", p.ID }

// CheckEach returns a check of records in turn: each valid, with an id no earlier one had.
func CheckEach[T Record]() func(T) error {
	// The ids in a sorted list while they rise, as in data files, else in a map: far cheaper than a map of all.
	var rising []int64
	other := map[int64]bool{}
	return func(r T) error {
		if err := r.Validate(); err != nil {
			return err
		}
		kind, id := r.identity()
		if n := len(rising); n == 0 || id > rising[n-1] {
			rising = append(rising, id)
			return nil
		}
		if _, found := slices.BinarySearch(rising, id); found || other[id] {
			return fmt.Errorf("%s %d: duplicate id", kind, id)
		}
		other[id] = true
		return nil
	}
}

// ValidateAll reports the first record CheckEach refuses; stores run it before writing any.
func ValidateAll[T Record](list []T) error {
	return Slice(list, len(list))(CheckEach[T](), func([]T) error { return nil })
}

// Batches reads records, running check on each as it reads it (a refusal can name its place), and hands them
// to each in batches, in order, until either fails. It can be read more than once: an import checks, then writes.
type Batches[T Record] func(check func(T) error, each func([]T) error) error

// Slice is the Batches of a list in memory, in batches of up to size.
func Slice[T Record](list []T, size int) Batches[T] {
	return func(check func(T) error, each func([]T) error) error {
		for part := range slices.Chunk(list, max(1, size)) {
			for _, r := range part {
				if err := check(r); err != nil {
					return err
				}
			}
			if err := each(part); err != nil {
				return err
			}
		}
		return nil
	}
}

// ReadAhead is b read (and checked) in a goroutine of its own, up to depth batches ahead of
// each: decoding and writing take their time side by side.
func ReadAhead[T Record](b Batches[T], depth int) Batches[T] {
	return func(check func(T) error, each func([]T) error) error {
		batches, stop, read := make(chan []T, depth), make(chan struct{}), make(chan error, 1)
		var failed error // each's, which stops the reading
		go func() {
			defer close(batches)
			read <- b(check, func(batch []T) error {
				select {
				case batches <- batch:
					return nil
				case <-stop:
					return failed
				}
			})
		}()
		for batch := range batches {
			if failed = each(batch); failed != nil {
				close(stop)
				<-read // batches is not read from now: the reader stops once it is full, or before
				return failed
			}
		}
		return <-read
	}
}
