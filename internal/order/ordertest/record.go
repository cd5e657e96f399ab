package ordertest

import (
	"encoding/json"
	"testing"
)

// Record is the JSON object of base (field name to JSON value) with the fields of change set;
// an empty value removes the field. Tests of the data files' checks make their bad records
// with it.
func Record(tb testing.TB, base, change map[string]string) []byte {
	tb.Helper()
	fields := map[string]json.RawMessage{}
	for k, v := range base {
		fields[k] = json.RawMessage(v)
	}
	for k, v := range change {
		if v == "" {
			delete(fields, k)
		} else {
			fields[k] = json.RawMessage(v)
		}
	}
	data, err := json.Marshal(fields)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
