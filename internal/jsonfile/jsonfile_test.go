package jsonfile

import (
	"errors"
	"strings"
	"testing"
)

type rec struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

func checkRec(r rec) error {
	if r.ID < 0 {
		return errors.New("id must not be negative")
	}
	return nil
}

func TestDecodeArray(t *testing.T) {
	got, err := decodeArray("f.json", []byte(`[{"id":9223372036854775807,"name":"a"},{"id":1}]`), checkOwn)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != 9223372036854775807 || got[1].ID != 1 {
		t.Fatalf("got %+v", got)
	}
	if got, err := decodeArray[own]("f.json", []byte(" [ ] "), nil); err != nil || len(got) != 0 {
		t.Fatalf("empty array: %v %v", got, err)
	}
}

func TestDecodeArrayErrorsNameThePlace(t *testing.T) {
	for name, tc := range map[string]struct{ data, want string }{
		"syntax":         {"[\n  {\"id\": 1},\n  {\"id\": 2,,}\n]", "f.json:3:12: invalid character ','"},
		"type":           {"[\n {\"id\": \"x\"}\n]", "f.json:2:"},
		"unknown field":  {"[\n {\"id\": 1, \"nmae\": \"x\"}\n]", `f.json:2:2: unknown field "nmae"`},
		"check":          {"[\n {\"id\": 1},\n {\"id\": -5}\n]", "f.json:3:2: id must not be negative"},
		"not an array":   {`{"id": 1}`, "f.json:1:1: want a JSON array"},
		"null":           {"\n  null\n", "f.json:2:3: want a JSON array"},
		"truncated":      {"[\n {\"id\": 1}", "f.json:2:11: unexpected end of file"},
		"trailing":       {"[] []", "f.json:1:4: invalid character"},
		"int64 overflow": {`[{"id": 9223372036854775808}]`, "f.json:1:"},
		"empty file":     {"", "f.json:1:1: unexpected end of file"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := decodeArray("f.json", []byte(tc.data), checkOwn)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
		})
	}
}

// selfDecoded decodes itself, as order.Order does, with rules of its own.
type selfDecoded struct{ n int }

func (s *selfDecoded) UnmarshalJSON(data []byte) error {
	if string(data) == `"bad"` {
		return errors.New("record: bad")
	}
	s.n = len(data)
	return nil
}

// TestDecodeArrayOfATypeThatDecodesItself: its own errors are placed like the others.
func TestDecodeArrayOfATypeThatDecodesItself(t *testing.T) {
	got, err := decodeArray[selfDecoded]("f.json", []byte(`["a", {"unknown": 1}]`), nil)
	if err != nil || len(got) != 2 || got[0].n != 3 || got[1].n != 14 {
		t.Fatalf("got %+v, %v", got, err)
	}
	_, err = decodeArray[selfDecoded]("f.json", []byte("[\n \"a\",\n \"bad\"\n]"), nil)
	if err == nil || err.Error() != "f.json:3:2: record: bad" {
		t.Fatalf("error %v", err)
	}
}
