// Package jsonfile reads the service's data files, JSON arrays of records, as streams. Its
// errors name the file, line and column: the file's first syntax error, else its first
// record refused.
package jsonfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Record is a record type that decodes itself from an element of the array, valid JSON.
type Record[T any] interface {
	*T
	UnmarshalJSON([]byte) error
}

// File is Each on the file at path, each time it is called.
func File[T any, R Record[T]](path string, size int) func(check func(T) error, each func([]T) error) error {
	return func(check func(T) error, each func([]T) error) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		return Each[T, R](path, f, check, size, each)
	}
}

// opts leave names twice and invalid UTF-8 to the records, as encoding/json did.
var opts = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// Each decodes the JSON array read from r and hands its elements, each once check (nil: none)
// passed it, to each in batches of up to size, holding one batch. A refused element is
// reported once the rest is read, so that a syntax error after it comes first; errors name
// name and are placed by reading r again. each's are returned as they are.
func Each[T any, R Record[T]](name string, r io.ReadSeeker, check func(T) error, size int, each func([]T) error) error {
	dec := jsontext.NewDecoder(r, opts...)
	if dec.PeekKind() != '[' { // its syntax errors come first
		if _, err := dec.ReadValue(); err != nil {
			return fault(name, r, dec, "", err)
		}
		if err := end(name, r, dec); err != nil {
			return err
		}
		return at(name, r, -1, errors.New("want a JSON array"))
	}
	dec.ReadToken()
	batch := make([]T, 0, max(1, size))
	refused, refusedAt := error(nil), int64(0)
	for context := "["; dec.PeekKind() != ']'; context = "[0 " { // 0 (a fault) is read as a value
		value, err := dec.ReadValue()
		switch {
		case err != nil:
			return fault(name, r, dec, context, err)
		case refused != nil:
			continue
		}
		var v T
		if err = R(&v).UnmarshalJSON(value); err == nil && check != nil {
			err = check(v)
		}
		if err != nil {
			refused, refusedAt = err, dec.InputOffset()-int64(len(value))
		} else if batch = append(batch, v); len(batch) == cap(batch) {
			if err := each(batch); err != nil {
				return err
			}
			batch = make([]T, 0, cap(batch)) // each may keep the one it had
		}
	}
	dec.ReadToken() // the ']' peeked
	if err := end(name, r, dec); err != nil {
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

// end refuses anything but space after the value dec read: jsontext reads a stream of values.
func end(name string, r io.ReadSeeker, dec *jsontext.Decoder) error {
	var err error
	if dec.PeekKind() == 0 { // no value: the end, or a fault
		if _, err = dec.ReadToken(); err == io.EOF {
			return nil
		}
	}
	return fault(name, r, dec, "0 ", err)
}

// fault places err, met by dec after context: a syntax error, in the words of jsontext's
// reading of whole values (its token reader's do not say what it expected), found by reading
// again what dec had left and a rune more; or the end of the input; or the input's own.
func fault(name string, r io.ReadSeeker, dec *jsontext.Decoder, context string, err error) error {
	more, _ := io.ReadAll(io.LimitReader(r, utf8.UTFMax))
	data := slices.Concat([]byte(context), dec.UnreadBuffer(), more)
	var se *jsontext.SyntacticError
	switch {
	case errors.As(jsonv2.Unmarshal(data, new(jsontext.Value), opts...), &se) && !errors.Is(se, io.ErrUnexpectedEOF):
		return at(name, r, dec.InputOffset()+se.ByteOffset-int64(len(context)), se.Err)
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		end, serr := r.Seek(0, io.SeekEnd)
		if serr != nil {
			return serr
		}
		return at(name, r, end, errors.New("unexpected end of file"))
	case errors.As(err, &se):
		return at(name, r, se.ByteOffset, se.Err)
	}
	return err
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
