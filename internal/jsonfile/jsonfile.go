// Package jsonfile reads the service's data files: JSON arrays of records. Errors
// name the file, line and column, so that an operator can fix a bad file at once.
package jsonfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// ReadArray decodes the JSON array in the file at path, checking each element with check
// (which may be nil). Unknown fields are errors: a misspelt field must not pass silently.
func ReadArray[T any](path string, check func(T) error) ([]T, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return decodeArray(path, data, check)
}

// decodeArray is ReadArray on data already read; name is used in errors.
func decodeArray[T any](name string, data []byte, check func(T) error) ([]T, error) {
	at := func(offset int64, err error) error {
		line, col := position(data, offset)
		return fmt.Errorf("%s:%d:%d: %w", name, line, col, err)
	}
	// A first pass finds syntax errors (all that Unmarshal into a RawMessage can fail with) at
	// an offset from the start of the file, which the streaming decoder below does not give.
	if err := json.Unmarshal(data, new(json.RawMessage)); err != nil {
		if se, ok := err.(*json.SyntaxError); ok && se.Offset < int64(len(data)) {
			return nil, at(se.Offset-1, syntaxReason(err))
		}
		return nil, at(int64(len(data)), errors.New("unexpected end of file"))
	}
	// The second pass walks the valid array to know where each element starts. A type that
	// decodes itself (order.Order) states its own rules, unknown fields included.
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	// The first pass proved the JSON valid, so Token cannot fail; anything but an array
	// (null or one object included) is not a list of records.
	if tok, _ := dec.Token(); tok != json.Delim('[') {
		return nil, at(skipSpace(data, 0), errors.New("want a JSON array"))
	}
	out := []T{}
	for i := 0; dec.More(); i++ {
		start := skipSpace(data, dec.InputOffset())
		var v T
		if err := dec.Decode(&v); err != nil {
			return nil, at(start, syntaxReason(err))
		}
		if check != nil {
			if err := check(v); err != nil {
				return nil, at(start, err)
			}
		}
		out = append(out, v)
	}
	return out, nil
}

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

// skipSpace returns the offset of the first byte from off that is neither space nor a comma.
func skipSpace(data []byte, off int64) int64 {
	return int64(len(data) - len(bytes.TrimLeft(data[off:], " \t\r\n,")))
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, offset int64) (line, col int) {
	offset = max(0, min(offset, int64(len(data))))
	before := data[:offset]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}
