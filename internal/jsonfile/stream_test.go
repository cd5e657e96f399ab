package jsonfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// decodeArray is every element of data, or the error; name is used in errors.
func decodeArray[T any, R Record[T]](name string, data []byte, check func(T) error) ([]T, error) {
	out := []T{}
	err := Each[T, R](name, bytes.NewReader(data), check, 2, func(batch []T) error {
		out = append(out, batch...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// wholeFile reads a file all at once, syntax first (json v2's Unmarshal of it whole), then
// each element: the model that Each, reading it as a stream, must equal.
func wholeFile[T any, R Record[T]](name string, data []byte, check func(T) error) ([]T, error) {
	at := func(offset int64, err error) error {
		before := data[:offset]
		line := bytes.Count(before, []byte{'\n'}) + 1
		col := int(offset) - bytes.LastIndexByte(before, '\n')
		return fmt.Errorf("%s:%d:%d: %w", name, line, col, err)
	}
	var elements []jsontext.Value
	err := jsonv2.Unmarshal(data, new(jsontext.Value), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if se := (*jsontext.SyntacticError)(nil); errors.As(err, &se) {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, at(int64(len(data)), errors.New("unexpected end of file"))
		}
		return nil, at(se.ByteOffset, se.Err)
	} else if err != nil {
		return nil, err
	}
	if jsonv2.Unmarshal(data, &elements, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)) != nil || elements == nil {
		return nil, at(int64(len(data)-len(bytes.TrimLeft(data, " \t\r\n"))), errors.New("want a JSON array"))
	}
	out, from := []T{}, 0
	for _, e := range elements {
		start := from + bytes.Index(data[from:], e) // Unmarshal keeps e as written; only space and a comma come before it
		from = start + len(e)
		var v T
		err := R(&v).UnmarshalJSON(e)
		if err == nil && check != nil {
			err = check(v)
		}
		if err != nil {
			return nil, at(int64(start), err)
		}
		out = append(out, v)
	}
	return out, nil
}

// badInputs are files with a fault, each kind at a few places.
var badInputs = []string{
	"", " ", "\n\n", "[", "[\n", "]", "}", "{", "x", "[x]", "[1,]", "[,1]", "[1 2]", "[1\n 2]", "[1}",
	"[}", "[{]", "[{}}", "[] []", "[]\n\nx", "[] ]", "[]0", "[] 0", "[]\"", "[]'", "[]\x00", "[]\xff",
	"null", "\n  null\n", `{"id": 1}`, `{"id": 1,,}`, `{"id": 1} x`, "true", "tru", "[tru]", "[tru,1]",
	"[\n  {\"id\": 1},\n  {\"id\": 2,,}\n]", "[\n {\"id\": \"x\"}\n]", "[\n {\"id\": 1, \"nmae\": \"x\"}\n]",
	"[\n {\"id\": 1},\n {\"id\": -5}\n]", "[\n {\"id\": 1}", `[{"id": 9223372036854775808}]`,
	"[\n {\"id\": -1},\n {\"id\": 2,,}\n]", "[\n {\"id\": -1},\n {\"id\": 2}\n", "[{\"id\": -1}] x",
	"[{\"id\": -1}, 5, {\"id\": 1}]", "[\r\n{\"id\":1}\r\n,\r\n{\"id\":2\r\n]", "[1.]", "[1e]", "[-]",
	"[\"a\\x\"]", "[\"\x01\"]", "[{\"id\":1,\"name\":\"a\"}{\"id\":2}]", "[{\"id\":1}\n,\n\n\n{\"id\":2]",
	"\t[\n\t\t{\"id\": 3}\n\t]\n\t,", strings.Repeat("[", 10002) + strings.Repeat("]", 10002),
	"[1 .", "[1 .5]", "[{\"id\":1}.5]", "[{\"id\":1}e5]", "[1 e]", "[{\"id\":1}-]", "[{\"id\":1} 5]",
}

// TestEachFailsAsTheWholeFileDid: the same message at the same line and column as the
// reading of the whole file it replaced, read in pieces of every size.
func TestEachFailsAsTheWholeFileDid(t *testing.T) {
	long := "[\n" + strings.Repeat("{\"id\": 1, \"name\": \"a long enough name\"},\n", 3000)
	inputs := append(badInputs, long+"{\"id\": -1}\n]", long+"{\"id\": 1,,}]", long+"{\"id\": 1}] x", long,
		long+"{\"id\": 1, \"name\": \""+strings.Repeat("x", 200<<10)+"\"}, 1.]")
	for _, in := range append(inputs, mixedInputs...) {
		for _, piece := range []int{1, 3, 512, 1 << 20} {
			eachAsWholeFile(t, []byte(in), piece, checkOwn)
		}
	}
}

// mixedInputs have plain records and others side by side: escapes, numbers, nesting, faults.
var mixedInputs = []string{
	"[{}, {\"id\":1,\"name\":\"a\"} ,\n{ \"id\" : -0 , \"name\" : \"\u00e9\" }\t,{\"id\":2}]",
	`[{"id":1},{"id":2,"name":"a\"b"},{"id":3},5,{"id":1.5},{"id":01},{"id":4,"x":{}},{"name":"\u00e9"}]`,
	`[{"id":true},{"name":null},{"nmae":"x"},{"id":1,"id":2},{"name":"` + "\xff\x7f" + `"}]`,
	`[{"id":1}{"id":2}]`, `[{"id":1},]`, `[{"id":-1},{"id":2}]`, `[{"id":-1},{"id":2},`, `[{"id":-1},{"id":2,}]`,
	`[{"id":1},{"id":-}]`, `[{"id":1},{"id":tru}]`, `[{"id":1},{"name":"` + "\x01" + `"}]`, `[{"id":1},{"id":2} x`,
	`[{"id":1},{"id":2},{"name":"a` + "\n" + `"}]`, `[{"id":1} ,{"id":2}]]`, `[{"id":1},{"id":2},{"id"`,
	`[{"id":1},{"id":2 "name":"a"}]`, `[{"id":1},{"id":nul}]`, `[{"id":1},{"id":true,"name":fals}]`,
	`[{"id":1},{"name\:1}]`, `[{"id":1},{"name` + "\t" + `:1}]`,
}

// own decodes itself, as order.Order does: rec's fields, none unknown, and it keeps what it was handed.
type own struct {
	rec
	raw string
}

func (o *own) UnmarshalJSON(data []byte) error {
	o.raw = string(data)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o.rec); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

func checkOwn(o own) error { return checkRec(o.rec) }

// eachAsWholeFile checks that Each, reading data in pieces of size, hands out the records
// wholeFile reads and fails as it does.
func eachAsWholeFile[T any, R Record[T]](t *testing.T, data []byte, size int, check func(T) error) {
	t.Helper()
	want, wantErr := wholeFile[T, R]("f.json", data, check)
	got := []T{}
	err := Each[T, R]("f.json", &pieces{data: data, size: size}, check, 2, func(b []T) error {
		got = append(got, b...)
		return nil
	})
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Errorf("%T, %.60q in pieces of %d: error %v, want %v", *new(T), data, size, err, wantErr)
	} else if err == nil && !reflect.DeepEqual(got, want) {
		t.Errorf("%T, %.60q in pieces of %d: %+v, want %+v", *new(T), data, size, got, want)
	}
}

// FuzzEach: Each is the model on any input, read in pieces of any size.
func FuzzEach(f *testing.F) {
	for _, in := range append(badInputs, mixedInputs...) {
		f.Add([]byte(in), uint8(0))
		f.Add([]byte(in), uint8(2))
	}
	f.Fuzz(func(t *testing.T, data []byte, piece uint8) {
		if bytes.Count(data, []byte("["))+bytes.Count(data, []byte("{")) >= 10000 {
			return // deep enough for the model's exception (wholeFile)
		}
		eachAsWholeFile(t, data, int(piece)+1, checkOwn)
	})
}

// pieces reads data size bytes at a time.
type pieces struct {
	data []byte
	off  int64
	size int
}

func (p *pieces) Read(b []byte) (int, error) {
	if p.off >= int64(len(p.data)) {
		return 0, io.EOF
	}
	n := copy(b[:min(len(b), p.size)], p.data[p.off:])
	p.off += int64(n)
	return n, nil
}

func (p *pieces) Seek(offset int64, whence int) (int64, error) {
	r := bytes.NewReader(p.data)
	r.Seek(p.off, io.SeekStart)
	off, err := r.Seek(offset, whence)
	p.off = off
	return off, err
}

// TestEachStreams: Each hands records out as it reads them, never reading far ahead of those
// it has handed out, and keeps little of what it has read.
func TestEachStreams(t *testing.T) {
	const n, bound = 200_000, 256 << 10 // about 6 MB of records; a bound far smaller
	in := &generated{n: n}
	handed, heap := 0, int64(0)
	err := Each("gen.json", in, checkOwn, 1000, func(batch []own) error {
		for i, r := range batch {
			if r.ID != int64(handed+i) {
				t.Fatalf("record %d has id %d", handed+i, r.ID)
			}
		}
		handed += len(batch)
		if ahead := in.read - in.offsetOf(handed); ahead > bound {
			t.Fatalf("%d records handed out, %d bytes read: %d ahead of them", handed, in.read, ahead)
		}
		switch handed {
		case n / 4:
			heap = heapAlloc()
		case n / 2: // 1.5 MB read since then
			if grown := heapAlloc() - heap; grown > 512<<10 {
				t.Fatalf("%d records handed out: the heap grew by %d bytes since %d", handed, grown, n/4)
			}
		}
		return nil
	})
	if err != nil || handed != n {
		t.Fatalf("Each: %d records, %v", handed, err)
	}
}

func heapAlloc() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// generated is a file of n records, one a line after the line of "[", made as it is read;
// among the first thousand, one in seven has a name with an escape.
type generated struct {
	n, next int
	pending []byte
	read    int
	ends    []int // the offset after each record made
}

// offsetOf is the offset of the end of record i-1: all before it.
func (g *generated) offsetOf(i int) int { return g.ends[i-1] }

// Seek is refused: Each seeks only to place an error, and the generated file has none.
func (g *generated) Seek(int64, int) (int64, error) { return 0, errors.New("generated: no seeking") }

func (g *generated) Read(b []byte) (int, error) {
	for len(g.pending) < len(b) && g.next < g.n {
		if g.next == 0 {
			g.pending = append(g.pending, "[\n"...)
			g.ends = make([]int, 0, g.n) // not to grow in the heap as Each reads
		}
		sep := ",\n"
		if g.next == g.n-1 {
			sep = "\n]"
		}
		name := "n"
		if g.next < 1000 && g.next%7 == 0 {
			name = `\u006e`
		}
		g.pending = fmt.Appendf(g.pending, "{\"id\": %d, \"name\": \"%s%d\"}%s", g.next, name, g.next, sep)
		g.ends = append(g.ends, g.read+len(g.pending))
		g.next++
	}
	if len(g.pending) == 0 {
		return 0, io.EOF
	}
	n := copy(b, g.pending)
	g.pending = g.pending[n:]
	g.read += n
	return n, nil
}
