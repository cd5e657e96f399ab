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
	}
	for _, word := range [...]string{"true", "false", "null"} {
		n := min(len(word), len(s.b)-s.i)
		if string(s.b[s.i:s.i+n]) == word[:n] { // a prefix at the end may be the word
			s.i += n
			return n == len(word)
		}
	}
	return false
}

// integer reads -?(0|[1-9][0-9]*); what follows it is the object's to take or refuse.
func (s *scan) integer() bool {
	if s.b[s.i] == '-' {
		s.i++
	}
	digits := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		if s.b[digits] == '0' {
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
		if c == '"' || c < 0x20 || c == '\\' {
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
