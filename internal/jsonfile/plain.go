package jsonfile

// plainElement frames the array element b starts with, after space and, unless first, a
// comma, if it is plain: a flat object whose strings have no escapes or control bytes and
// whose numbers are integers. Such JSON is valid, so the decoder would take it without
// fault and hand it, '{' to '}', to an Unmarshaler: Each's fast path does the same in one
// scan. If b holds no such element, end is 0 and stop is where it gave up: len(b) if b
// ended first, when more bytes may tell.
func plainElement(b []byte, first bool) (start, end, stop int) {
	s := scan{b: b}
	if (first || s.is(',')) && s.is('{') {
		start = s.i - 1
		if s.object() {
			return start, s.i, s.i
		}
	}
	return 0, 0, s.i
}

// scan reads plain JSON; each of its steps skips the space before it, and stops at the
// first byte it does not take.
type scan struct {
	b []byte
	i int
}

// object reads the rest of an object after its '{'.
func (s *scan) object() bool {
	if s.is('}') {
		return true
	}
	for s.str() && s.is(':') && s.value() {
		if s.is('}') {
			return true
		}
		if !s.is(',') {
			return false
		}
	}
	return false
}

func (s *scan) value() bool {
	s.space()
	if s.i == len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.str()
	case c == '-' || c >= '0' && c <= '9':
		return s.integer()
	case c == 't':
		return s.word("true")
	case c == 'f':
		return s.word("false")
	case c == 'n':
		return s.word("null")
	}
	return false
}

// word reads w, or as much of it as b holds: then more bytes may tell.
func (s *scan) word(w string) bool {
	n := min(len(w), len(s.b)-s.i)
	if string(s.b[s.i:s.i+n]) != w[:n] {
		return false
	}
	s.i += n
	return n == len(w)
}

// integer reads -?(0|[1-9][0-9]*); what follows it is the object's to take or refuse.
func (s *scan) integer() bool {
	if s.b[s.i] == '-' {
		s.i++
	}
	digits := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		if s.b[digits] == '0' { // the whole integer: 01 is not one
			break
		}
	}
	return s.i > digits
}

// str reads a string without escapes or control bytes.
func (s *scan) str() bool {
	if !s.is('"') {
		return false
	}
	rest := s.b[s.i:] // a local: this loop is most of the scan
	for i, c := range rest {
		if stops[c] {
			s.i += i
			if c != '"' {
				return false
			}
			s.i++
			return true
		}
	}
	s.i = len(s.b)
	return false
}

// stops are the bytes that end a plain string or make it not plain.
var stops = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func (s *scan) is(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scan) space() {
	for s.i < len(s.b) && isSpace(s.b[s.i]) {
		s.i++
	}
}
