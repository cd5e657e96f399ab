package redisstore

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

// FuzzParseData: what parseData reads, encoding/json reads the same; and it reads every
// record json.Marshal writes.
func FuzzParseData(f *testing.F) {
	for _, seed := range []string{
		`{"petId":7,"quantity":1,"shipDate":"2026-11-20T00:00:00Z","complete":false}`,
		`{"petId":-9223372036854775808,"quantity":2147483647,"shipDate":"2026-11-20T08:30:00.123456789+05:30","complete":true}`,
		`{"petId":07,"quantity":1,"shipDate":"2026-11-20T00:00:00Z","complete":false}`,
		`{"petId":+7,"quantity":1,"shipDate":"2026-11-20T00:00:00Z","complete":false}`,
		`{"petId":7,"quantity":2147483648,"shipDate":"2026-11-20T00:00:00Z","complete":false}`,
		`{"petId":7,"quantity":1,"shipDate":"2026-11-20T24:00:00Z","complete":false}`,
		`{"petId":7,"quantity":1,"shipDate":"2026-11-20T00:00:00\u005a","complete":false}`,
		`{"petId":7, "quantity":1,"shipDate":"2026-11-20T00:00:00Z","complete":false}`,
		`{"petId":7,"quantity":1,"shipDate":"2026-11-20T00:00:00Z","complete":1}`,
		`{"petId":1e3,"quantity":1,"shipDate":"2026-11-20T00:00:00Z","complete":false}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, ok := parseData(raw)
		if !ok {
			return
		}
		var want orderData
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatalf("parseData read %q, which encoding/json refuses: %v", raw, err)
		}
		if got.PetID != want.PetID || got.Quantity != want.Quantity || got.Complete != want.Complete ||
			!got.ShipDate.Equal(want.ShipDate) || got.ShipDate.String() != want.ShipDate.String() {
			t.Fatalf("%q: parseData %+v, encoding/json %+v", raw, got, want)
		}
	})
}

// TestParseDataReadsWhatMarshalWrites: every record import.lua is given is read directly.
func TestParseDataReadsWhatMarshalWrites(t *testing.T) {
	at := time.Date(2026, 11, 20, 8, 30, 0, 123456789, time.UTC)
	for _, d := range []orderData{
		{0, 0, at, false}, {9223372036854775807, 2147483647, at.Truncate(time.Second), true},
		{-1, -2147483648, at.In(time.FixedZone("", 5*3600+1800)), false},
	} {
		raw, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := parseData(string(raw))
		if !ok || got.PetID != d.PetID || got.Quantity != d.Quantity || !got.ShipDate.Equal(d.ShipDate) || got.Complete != d.Complete {
			t.Fatalf("%s: parseData %+v, %v", raw, got, ok)
		}
	}
}

// TestParseDataReadsWhatImportWrites: the import writes each order's data in json.Marshal's
// bytes, the UTC's: at every edge an order admits, parseData reads it directly.
func TestParseDataReadsWhatImportWrites(t *testing.T) {
	at := time.Date(2026, 11, 20, 8, 30, 0, 123456789, time.UTC)
	for _, d := range []orderData{
		{0, 0, at, false}, {math.MaxInt64, math.MaxInt32, at.Truncate(time.Second), true},
		{math.MinInt64, math.MinInt32, at.In(time.FixedZone("", 14*3600)), false},
		{1, 1, time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), true},
		{1, 1, time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), false},
		{1, 1, at.Truncate(time.Millisecond), false}, {1, 1, at.Truncate(10 * time.Microsecond), false},
	} {
		utc := d
		utc.ShipDate = d.ShipDate.UTC()
		want, err := json.Marshal(utc)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := parseData(string(want)); !ok {
			t.Errorf("parseData refused %s", want)
		}
	}
}
