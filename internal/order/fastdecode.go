package order

import "strconv"

// plainOrder reads an order in the shape data files have: one object, its six fields each
// once by their exact names, integers without fraction or exponent, strings of printable
// ASCII without escapes, and a shipDate parseShipDate takes. ok is false for anything else,
// which the general decoder then reads, to name what is wrong. It is a fast path for
// imports of many orders (the general one is most of their reading): whatever it takes, the
// general one takes the same way (FuzzPlainOrder).
func plainOrder(data []byte) (o Order, ok bool) {
	p := plain{data: data}
	if !p.byte('{') {
		return o, false
	}
	var seen [6]bool
	for i := 0; i < 6; i++ {
		if i > 0 && !p.byte(',') {
			return o, false
		}
		key, ok := p.quoted()
		if !ok || !p.byte(':') {
			return o, false
		}
		var f int
		switch string(key) { // no copy made
		case "id":
			o.ID, ok = p.int(64)
		case "petId":
			f = 1
			o.PetID, ok = p.int(64)
		case "quantity":
			f = 2
			var q int64
			q, ok = p.int(32)
			o.Quantity = int32(q)
		case "shipDate":
			f = 3
			var s string
			if s, ok = p.string(); ok {
				var err error
				o.ShipDate, err = parseShipDate(s)
				ok = err == nil
			}
		case "complete":
			f = 4
			o.Complete, ok = p.bool()
		case "status":
			f = 5
			var b []byte
			b, ok = p.quoted()
			o.Status = status(b)
		default:
			return o, false
		}
		if !ok || seen[f] {
			return o, false
		}
		seen[f] = true
	}
	return o, p.byte('}') && p.end()
}

// status is b as a Status: a state's own string if it is one, not a copy for each order.
func status(b []byte) Status {
	for _, s := range [...]Status{StatusPending, StatusShipped, StatusCancelled} {
		if string(b) == string(s) {
			return s
		}
	}
	return Status(b)
}

// plain reads the tokens plainOrder takes; each skips the space before it.
type plain struct {
	data []byte
	i    int
}

func (p *plain) space() {
	for p.i < len(p.data) && (p.data[p.i] == ' ' || p.data[p.i] == '\t' || p.data[p.i] == '\n' || p.data[p.i] == '\r') {
		p.i++
	}
}

func (p *plain) byte(c byte) bool {
	p.space()
	if p.i < len(p.data) && p.data[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *plain) end() bool {
	p.space()
	return p.i == len(p.data)
}

func (p *plain) string() (string, bool) {
	b, ok := p.quoted()
	return string(b), ok
}

// quoted is the bytes of a string between its quotes.
func (p *plain) quoted() ([]byte, bool) {
	if !p.byte('"') {
		return nil, false
	}
	rest := p.data[p.i:] // a local: this loop is most of the reading
	for i, c := range rest {
		switch {
		case c == '"':
			p.i += i + 1
			return rest[:i], true
		case c < 0x20 || c > 0x7e || c == '\\':
			return nil, false
		}
	}
	return nil, false
}

// int reads -?(0|[1-9][0-9]*) that fits in bits.
func (p *plain) int(bits int) (int64, bool) {
	p.space()
	start := p.i
	if p.i < len(p.data) && p.data[p.i] == '-' {
		p.i++
	}
	digits := p.i
	for p.i < len(p.data) && p.data[p.i] >= '0' && p.data[p.i] <= '9' {
		p.i++
	}
	if p.i == digits || (p.data[digits] == '0' && p.i > digits+1) {
		return 0, false
	}
	n, err := strconv.ParseInt(string(p.data[start:p.i]), 10, bits)
	return n, err == nil
}

func (p *plain) bool() (bool, bool) {
	p.space()
	for _, v := range []bool{true, false} {
		word := strconv.FormatBool(v)
		if len(p.data)-p.i >= len(word) && string(p.data[p.i:p.i+len(word)]) == word {
			p.i += len(word)
			return v, true
		}
	}
	return false, false
}
