// Package jsonfile reads the service's data files, JSON arrays of records, as streams. Its
// errors name the file, line and column: the file's first syntax error, in encoding/json's
// words, else its first record refused.
package jsonfile

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Record is a record type that decodes itself (UnmarshalJSON) from an element of the array,
// valid JSON; its errors are placed at the element.
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
// passed it, to each in batches of up to size, in order: it holds a batch and the decoder's
// buffer, never the whole input. A refused element is reported once the rest is read, so
// that a syntax error after it comes first; errors are placed by reading r again. name is
// used in errors; each's are returned as they are.
func Each[T any, R Record[T]](name string, r io.ReadSeeker, check func(T) error, size int, each func([]T) error) error {
	in := bufio.NewReaderSize(r, 64<<10)
	dec := json.NewDecoder(in)
	if tok, err := dec.Token(); err != nil {
		return fault(name, r, 0, "", err)
	} else if tok != json.Delim('[') { // its syntax errors come first
		if _, err := r.Seek(0, io.SeekStart); err != nil {
			return err
		}
		in := bufio.NewReader(r)
		dec := json.NewDecoder(in)
		if err := dec.Decode(new(json.RawMessage)); err != nil {
			return fault(name, r, 0, "", err)
		}
		if err := afterValue(name, r, dec, in); err != nil {
			return err
		}
		return at(name, r, -1, errors.New("want a JSON array"))
	}
	batch := make([]T, 0, max(1, size))
	var refused error
	var refusedAt int64
	// context is what came before an element in the array, for a fault in it to be named
	// as in the whole file.
	from, context := dec.InputOffset(), "["
	for ; dec.More(); from, context = dec.InputOffset(), `[""` {
		var e element[T, R]
		err := dec.Decode(&e)
		switch {
		case err != nil && e.n == 0: // the JSON, not the record
			return fault(name, r, from, context, err)
		case refused != nil:
		case err == nil && check != nil:
			err = check(e.v)
		}
		if refused == nil && err != nil {
			refused, refusedAt = err, dec.InputOffset()-int64(e.n)
		} else if refused == nil {
			if batch = append(batch, e.v); len(batch) == cap(batch) {
				if err := each(batch); err != nil {
					return err
				}
				batch = make([]T, 0, cap(batch)) // each may keep the one it had
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return fault(name, r, from, context, err)
	}
	if err := afterValue(name, r, dec, in); err != nil {
		return err
	}
	switch {
	case refused != nil:
		return at(name, r, refusedAt, refused)
	case len(batch) > 0:
		return each(batch)
	}
	return nil
}

// element is a record and the length of the JSON it was decoded from, to place its errors.
type element[T any, R Record[T]] struct {
	v T
	n int
}

func (e *element[T, R]) UnmarshalJSON(data []byte) error {
	e.n = len(data)
	return R(&e.v).UnmarshalJSON(data)
}

// afterValue places the first byte after the value dec read from in that is not space, if any.
func afterValue(name string, r io.ReadSeeker, dec *json.Decoder, in io.Reader) error {
	end := dec.InputOffset()
	rest := bufio.NewReader(io.MultiReader(dec.Buffered(), in))
	for c, err := rest.ReadByte(); err == nil; c, err = rest.ReadByte() {
		if !strings.ContainsRune(" \t\r\n", rune(c)) {
			return at(name, r, end, json.Unmarshal([]byte{'[', ']', c}, new(any)))
		}
		end++
	}
	return nil
}

// fault places the syntax error err met in r from offset on, after context: a decoder of its
// own reads it again, since the offsets of the token API's errors are not the input's.
func fault(name string, r io.ReadSeeker, offset int64, context string, err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return err // the input's own
	}
	if _, err := r.Seek(offset, io.SeekStart); err != nil {
		return err
	}
	err = json.NewDecoder(io.MultiReader(strings.NewReader(context), r)).Decode(new(json.RawMessage))
	if errors.As(err, &se) {
		return at(name, r, offset+se.Offset-1-int64(len(context)), err)
	}
	end, serr := r.Seek(0, io.SeekEnd)
	if serr != nil {
		return serr
	}
	return at(name, r, end, errors.New("unexpected end of file"))
}

// at places err at offset of r (-1: at its first byte that is not space), by line and
// column, from 1.
func at(name string, r io.ReadSeeker, offset int64, err error) error {
	line, col := 1, 1
	if _, serr := r.Seek(0, io.SeekStart); serr == nil {
		in := bufio.NewReader(r)
		for i := int64(0); offset < 0 || i < offset; i++ {
			c, rerr := in.ReadByte()
			if rerr != nil || offset < 0 && !strings.ContainsRune(" \t\r\n", rune(c)) {
				break
			}
			if col++; c == '\n' {
				line, col = line+1, 1
			}
		}
	}
	return fmt.Errorf("%s:%d:%d: %w", name, line, col, err)
}
