// Package jsonfile reads the service's data files, JSON arrays of records, as streams. Its
// errors name the file, line and column, and are those a read of the whole file would give:
// the file's first syntax error, in encoding/json's words, else its first record refused.
package jsonfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Record is a record type that decodes itself (UnmarshalJSON) from an element of the
// array, valid JSON; its errors are placed at the element.
type Record[T any] interface {
	*T
	json.Unmarshaler
}

// EachInFile is Each on the file at path, named by path in errors.
func EachInFile[T any, R Record[T]](path string, check func(T) error, size int, each func([]T) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return Each[T, R](path, f, check, size, each)
}

// Each decodes the JSON array read from r and hands its elements, each once check (nil: none)
// passed it, to each in batches of up to size, in order: it holds a batch and an element,
// never the whole input. A refused element is reported once the rest is read, as a syntax
// error after it comes first. name is used in errors; each's are returned as they are.
func Each[T any, R Record[T]](name string, r io.Reader, check func(T) error, size int, each func([]T) error) error {
	in := &input{name: name, r: r, buf: make([]byte, 0, 64<<10)}
	if c, ok := in.peek(); !ok {
		return in.ended()
	} else if c != '[' {
		// Anything but an array is no list of records, once it has no syntax error.
		start := in.offset()
		for in.fill() {
		}
		if err := in.fault("", in.buf[in.pos:], start); err != nil {
			return err
		}
		return in.at(start, errors.New("want a JSON array"))
	}
	in.pos++
	batch := make([]T, 0, max(1, size))
	var refused error
	// The element is validated after context, the JSON before it in the array as far as
	// encoding/json's scanner can tell, so that its faults have the scanner's words.
	for context := "["; ; context = `["",` {
		c, ok := in.peek()
		if !ok {
			return in.ended()
		}
		if c == ']' && context == "[" {
			in.pos++
			break
		}
		start := in.offset()
		elem, whole := in.element()
		in.scratch = append(append(append(in.scratch[:0], context...), elem...), ']')
		if !whole || len(elem) == 0 || !json.Valid(in.scratch) {
			// The byte after a scalar is the one that may be its fault ("1." then "]").
			return in.fault(context, in.buf[in.pos:min(in.pos+len(elem)+1, len(in.buf))], start)
		}
		if refused == nil {
			var v T
			err := R(&v).UnmarshalJSON(elem)
			if err == nil && check != nil {
				err = check(v)
			}
			if err != nil {
				refused = in.at(start, err)
			} else if batch = append(batch, v); len(batch) == cap(batch) {
				if err := each(batch); err != nil {
					return err
				}
				batch = make([]T, 0, cap(batch)) // each may keep the one it had
			}
		}
		in.pos += len(elem)
		if c, ok = in.peek(); !ok {
			return in.ended()
		}
		in.pos++
		if c == ']' {
			break
		}
		if c != ',' {
			return in.fault(`[""`, []byte{c}, in.offset()-1)
		}
	}
	if c, ok := in.peek(); ok {
		return in.fault("[]", []byte{c}, in.offset())
	}
	switch {
	case in.err != io.EOF:
		return in.err
	case refused != nil:
		return refused
	case len(batch) > 0:
		return each(batch)
	}
	return nil
}

// Members hands f the name and value of each member of the object data, valid JSON, in turn
// as written, and stops at f's first error. data of another value is "want a JSON object".
func Members(data []byte, f func(name, value []byte) error) error {
	if len(data) == 0 || data[0] != '{' {
		return errors.New("want a JSON object")
	}
	for i := skipSpace(data, 1); data[i] != '}'; i = skipSpace(data, i+1) { // +1: the comma
		n, _ := frame(data[i:])
		name := data[i+1 : i+n-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			var s string
			json.Unmarshal(data[i:i+n], &s)
			name = []byte(s)
		}
		i = skipSpace(data, skipSpace(data, i+n)+1) // +1: the colon
		n, _ = frame(data[i:])
		if err := f(name, data[i:i+n]); err != nil {
			return err
		}
		if i = skipSpace(data, i+n); data[i] == '}' {
			break
		}
	}
	return nil
}

// frame is the length of the JSON value b begins with, if it is valid: through its closing
// bracket or quote, or for a scalar up to the space or delimiter after it. ok is false if b
// ends first. An invalid value is framed some way; validation finds its fault.
func frame(b []byte) (n int, ok bool) {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if i >= len(b) {
				return len(b), false
			}
			if depth == 0 {
				return i + 1, true
			}
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth == 0 {
				return i, true
			}
			if depth--; depth == 0 {
				return i + 1, true
			}
		case depth == 0 && (c == ',' || isSpace(c)):
			return i, true
		}
	}
	return len(b), false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// input is the file as Each reads it: the bytes from the current element on, and the count
// of the lines before them, to place an error.
type input struct {
	name      string
	r         io.Reader
	err       error  // r's, once it has ended (io.EOF) or failed
	buf       []byte // buf[pos:] are read and not yet taken
	pos       int
	base      int64  // the offset of buf[0]
	lines     int    // the lines before base
	lineStart int64  // the offset of the first byte of base's line
	scratch   []byte // an element in its context, to validate
}

// fill lets go of the bytes before pos and fills the buffer from r, so that an element is
// framed again only once the buffer is full; it reports whether it read any.
func (in *input) fill() bool {
	gone := in.buf[:in.pos]
	if n := bytes.Count(gone, []byte{'\n'}); n > 0 {
		in.lines += n
		in.lineStart = in.base + int64(bytes.LastIndexByte(gone, '\n')) + 1
	}
	in.base += int64(in.pos)
	in.buf, in.pos = in.buf[:copy(in.buf, in.buf[in.pos:])], 0
	if len(in.buf) == cap(in.buf) { // an element longer than the buffer
		in.buf = append(in.buf, make([]byte, len(in.buf))...)[:len(in.buf)]
	}
	kept := len(in.buf)
	for in.err == nil && len(in.buf) < cap(in.buf) {
		n, err := in.r.Read(in.buf[len(in.buf):cap(in.buf)])
		in.buf, in.err = in.buf[:len(in.buf)+n], err
	}
	return len(in.buf) > kept
}

// peek skips space and returns the next byte, not taken; ok is false at the end of the input.
func (in *input) peek() (c byte, ok bool) {
	for {
		if in.pos = skipSpace(in.buf, in.pos); in.pos < len(in.buf) {
			return in.buf[in.pos], true
		}
		if !in.fill() {
			return 0, false
		}
	}
}

// element frames the element at pos, reading more while it cannot tell; whole is false if the
// input ended first.
func (in *input) element() (elem []byte, whole bool) {
	for {
		n, ok := frame(in.buf[in.pos:])
		if ok || !in.fill() {
			return in.buf[in.pos : in.pos+n], ok
		}
	}
}

func (in *input) offset() int64 { return in.base + int64(in.pos) }

// ended is the error of an input that ends where more is needed.
func (in *input) ended() error {
	if in.err != nil && in.err != io.EOF {
		return in.err
	}
	return in.at(in.base+int64(len(in.buf)), errors.New("unexpected end of file"))
}

// fault is the first fault of data after context, placed at its byte (data begins at offset
// start), or nil if there is none. A fault at the end of data is its last byte's only if one
// more byte does not move it: else the input ended too soon.
func (in *input) fault(context string, data []byte, start int64) error {
	text := append([]byte(context), data...)
	err := json.Unmarshal(text, new(json.RawMessage))
	var se, more *json.SyntaxError
	if err == nil || !errors.As(err, &se) {
		return err
	}
	if se.Offset < int64(len(text)) || errors.As(json.Unmarshal(append(text, ' '), new(json.RawMessage)), &more) && *more == *se {
		return in.at(start+se.Offset-1-int64(len(context)), err)
	}
	return in.ended()
}

// at places err at offset, one of the bytes kept, by line and column, from 1.
func (in *input) at(offset int64, err error) error {
	before := in.buf[:offset-in.base]
	line, lineStart := in.lines+1, in.lineStart
	if n := bytes.Count(before, []byte{'\n'}); n > 0 {
		line += n
		lineStart = in.base + int64(bytes.LastIndexByte(before, '\n')) + 1
	}
	return fmt.Errorf("%s:%d:%d: %w", in.name, line, offset-lineStart+1, err)
}
