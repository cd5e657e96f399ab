// Package jsonfile reads the service's data files: JSON arrays of records. Errors
// name the file, line and column, so that an operator can fix a bad file at once.
package jsonfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// ReadArray decodes the JSON array in the file at path, checking each element with check
// (which may be nil). Unknown fields are errors: a misspelt field must not pass silently.
func ReadArray[T any](path string, check func(T) error) ([]T, error) {
	out := []T{}
	err := EachInFile(path, check, 1000, func(batch []T) error {
		out = append(out, batch...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EachInFile is Each on the file at path, named by path in errors.
func EachInFile[T any](path string, check func(T) error, size int, each func([]T) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	// The decoder reads little at a time: a call to the system for each would be most of its work.
	return Each(path, bufio.NewReaderSize(f, 1<<16), check, size, each)
}

// Each decodes the JSON array read from r as ReadArray does, and hands its elements to each in
// batches of up to size, in order, as it reads them: it holds a batch and the decoder's
// buffer, never the whole input. Errors of each are returned as they are; the others are
// those ReadArray would give on the whole input, at the same place. name is used in errors.
func Each[T any](name string, r io.Reader, check func(T) error, size int, each func([]T) error) error {
	a := &array{name: name, in: &window{r: r, line: 1}}
	a.dec = json.NewDecoder(a.in)
	a.dec.DisallowUnknownFields()
	// Anything but an array (null or one object included) is not a list of records, once
	// it has no syntax error: ReadArray names the first syntax error of the file first.
	a.dec.More() // to its first byte, whatever it is
	first := a.offset()
	if c, ok := a.next(); !ok || c != '[' {
		if err := a.syntax("", a.dec.Decode(new(json.RawMessage))); err != nil {
			return err
		}
		if err := a.trailing(); err != nil {
			return err
		}
		return a.at(first, errors.New("want a JSON array"))
	}
	a.dec.Token()
	batch := make([]T, 0, max(1, size))
	// After a record is refused, the rest is still read for a syntax error, which comes first.
	var refused error
	i := 0
	// One T for all elements, copied out of: each would be in the heap, as decoders take its address.
	v, zero := new(T), *new(T)
	// A type that decodes itself is handed plain elements at once (plainElement): the decoder
	// would scan each twice before handing it over, and it would not use DisallowUnknownFields.
	u, direct := any(v).(json.Unmarshaler)
	for ; ; i++ {
		*v = zero
		var err error
		start, end := int64(-1), int64(-1)
		if direct {
			start, end = a.plain(i == 0)
		}
		if end >= 0 {
			a.in.release(start)
			if refused != nil {
				continue
			}
			err = u.UnmarshalJSON(a.in.bytes(start, end))
		} else {
			if !a.dec.More() {
				break
			}
			before := a.offset() // at the comma (or the first element)
			if refused == nil {
				err = a.dec.Decode(v)
			} else {
				err = a.dec.Decode(new(json.RawMessage))
			}
			// The value was read if the decoder went past it; otherwise the error is its syntax.
			if a.offset() <= before+int64(min(i, 1)) {
				prefix := afterComma
				if i > 0 && a.offset() == before {
					prefix = afterElement // no comma after an element
				}
				return a.syntax(prefix, err)
			}
			a.in.release(before)
			if refused != nil {
				continue
			}
			start = a.in.skipSpace(before)
		}
		if err == nil && check != nil {
			err = check(*v)
		}
		if err != nil {
			refused = a.at(start, syntaxReason(err))
			continue
		}
		if batch = append(batch, *v); len(batch) == cap(batch) {
			if err := each(batch); err != nil {
				return err
			}
			batch = make([]T, 0, cap(batch)) // each may keep the one it has
		}
	}
	prefix := afterElement
	if i == 0 {
		prefix = "["
	}
	if _, err := a.dec.Token(); err != nil {
		return a.syntax(prefix, err)
	}
	if err := a.trailing(); err != nil {
		return err
	}
	if refused != nil {
		return refused
	}
	if len(batch) > 0 {
		return each(batch)
	}
	return nil
}

// array is the state of one Each.
type array struct {
	name   string
	in     *window
	dec    *json.Decoder // nil while plain elements are read without it
	origin int64         // the offset of dec's first byte
	pos    int64         // the offset after the last plain element, while dec is nil
}

// offset is where the reading is: after the last token or element read.
func (a *array) offset() int64 {
	if a.dec == nil {
		return a.pos
	}
	return a.origin + a.dec.InputOffset()
}

// decodeAfter puts a new decoder at offset, after an element: it reads afterElement
// first, for the state the decoder of the whole array would have there.
func (a *array) decodeAfter(offset int64) {
	a.in.read = offset
	a.dec = json.NewDecoder(io.MultiReader(strings.NewReader(afterElement), a.in))
	a.dec.DisallowUnknownFields()
	a.origin = offset - int64(len(afterElement))
	a.dec.Token() // [
	a.dec.Token() // ""
}

// plain frames the next element (plainElement), after a comma unless first, reading more
// while it cannot tell. Without one, end is -1 and a decoder reads from where it is, in the
// state it would have had: after an element.
func (a *array) plain(first bool) (start, end int64) {
	at := a.offset()
	for {
		rest := a.in.from(at)
		s, e, stop := plainElement(rest, first)
		if e > 0 {
			a.dec, a.pos = nil, at+int64(e)
			return at + int64(s), a.pos
		}
		// Reading at least as much again each time, a long element is scanned twice over at most.
		if stop < len(rest) || !a.in.more(max(1<<16, len(rest))) {
			break
		}
	}
	if a.dec == nil {
		a.decodeAfter(at)
	}
	return -1, -1
}

func (a *array) at(offset int64, err error) error {
	line, col := a.in.position(offset)
	return fmt.Errorf("%s:%d:%d: %w", a.name, line, col, err)
}

// next is the byte at the decoder's position, if it holds one.
func (a *array) next() (byte, bool) {
	var c [1]byte
	n, _ := a.dec.Buffered().Read(c[:])
	return c[0], n == 1
}

// syntax places err, the decoder's error at its position, as Unmarshal of the whole file
// would: with the same message, at the same byte. The decoder has its own messages, and an
// offset that does not count what Token and More skip; but it holds the bytes from its
// position on, the bad one included, and Unmarshal of them after prefix (which puts its
// scanner in the decoder's state) finds the same fault at the same place.
func (a *array) syntax(prefix string, err error) error {
	var se *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return a.at(a.in.end(), errors.New("unexpected end of file"))
	case !errors.As(err, &se):
		return err // reading failed
	}
	rest, _ := io.ReadAll(a.dec.Buffered())
	data := append([]byte(prefix), rest...)
	err = json.Unmarshal(data, new(json.RawMessage))
	if !errors.As(err, &se) || strings.HasPrefix(se.Error(), "unexpected end") {
		return fmt.Errorf("%s: %w", a.name, err) // never: the bytes have the fault
	}
	return a.at(a.offset()+se.Offset-1-int64(len(prefix)), syntaxReason(err))
}

// Prefixes that put a scanner in a decoder's state: after an element, and after its comma.
// The element is a string, which no byte can extend (after 0, ".5" would be its fraction).
const afterElement, afterComma = `[""`, `["",`

// trailing refuses anything but space after the top-level value, as Unmarshal does.
func (a *array) trailing() error {
	off := a.offset()
	rest := bufio.NewReader(io.MultiReader(a.dec.Buffered(), a.in))
	for {
		c, err := rest.ReadByte()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if !isSpace(c) {
			// Unmarshal's words for it, from its scanner.
			return a.at(off, syntaxReason(json.Unmarshal([]byte{'0', ' ', c}, new(json.RawMessage))))
		}
		off++
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// syntaxReason drops the decoder's "json: " prefix and says what an unexpected EOF means.
func syntaxReason(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("unexpected end of file")
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("field %s: cannot use a JSON %s as %s", te.Field, te.Value, te.Type)
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}

// window is the input as Each reads it. It keeps the bytes from the current element on, so
// that an error can be placed by line and column and a decoder can start again from any of
// them, and counts the lines of those it lets go.
type window struct {
	r         io.Reader
	err       error // r's, once it has ended or failed
	kept      []byte
	base      int64 // the offset of kept[0]
	read      int64 // the offset Read reads from
	line      int   // the line of base, from 1
	lineStart int64 // the offset of the first byte of that line
}

// Read reads from the offset read on: what is kept, then more of r.
func (w *window) Read(p []byte) (int, error) {
	if w.read == w.end() && !w.more(len(p)) {
		return 0, w.err
	}
	n := copy(p, w.from(w.read))
	w.read += int64(n)
	return n, nil
}

// more reads n more bytes of r onto kept, or as many as r has, and reports whether it read any.
func (w *window) more(n int) bool {
	end := len(w.kept)
	w.kept = slices.Grow(w.kept, n)
	for len(w.kept) < end+n && w.err == nil {
		m, err := w.r.Read(w.kept[len(w.kept) : end+n])
		w.kept, w.err = w.kept[:len(w.kept)+m], err
	}
	return len(w.kept) > end
}

// from is the bytes from offset on that have been read; bytes, those from start to end.
func (w *window) from(offset int64) []byte      { return w.kept[offset-w.base:] }
func (w *window) bytes(start, end int64) []byte { return w.kept[start-w.base : end-w.base] }

// release lets go of the bytes before offset, counting their lines, once they are many:
// each time copies the bytes after it.
func (w *window) release(offset int64) {
	k := offset - w.base
	if k < 1<<16 {
		return
	}
	gone := w.kept[:k]
	if n := bytes.Count(gone, []byte{'\n'}); n > 0 {
		w.line += n
		w.lineStart = w.base + int64(bytes.LastIndexByte(gone, '\n')) + 1
	}
	w.kept = w.kept[:copy(w.kept, w.kept[k:])]
	w.base = offset
}

// end is the offset after the last byte read.
func (w *window) end() int64 { return w.base + int64(len(w.kept)) }

// position turns an offset, at or after base, into a 1-based line and column.
func (w *window) position(offset int64) (line, col int) {
	offset = max(w.base, min(offset, w.end()))
	before := w.kept[:offset-w.base]
	line, lineStart := w.line, w.lineStart
	if n := bytes.Count(before, []byte{'\n'}); n > 0 {
		line += n
		lineStart = w.base + int64(bytes.LastIndexByte(before, '\n')) + 1
	}
	return line, int(offset-lineStart) + 1
}

// skipSpace returns the offset of the first byte from offset on that is neither space nor a comma.
func (w *window) skipSpace(offset int64) int64 {
	rest := w.kept[offset-w.base:]
	return offset + int64(len(rest)-len(bytes.TrimLeft(rest, " \t\r\n,")))
}
