package order

import (
	"fmt"
	"testing"
)

// FuzzPlainOrder: what the fast path takes, the general decoder takes as the same order.
func FuzzPlainOrder(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"petId":1001,"quantity":2,"shipDate":"2026-01-02T00:00:00Z","complete":true,"status":"shipped"}`,
		"{ \"status\" : \"x\" ,\n\t\"complete\":false,\"shipDate\":\"2026-01-02T00:00:00.5+01:00\",\"quantity\":0,\"petId\":0,\"id\":-0 }",
		`{"id":9223372036854775807,"petId":-1,"quantity":2147483647,"shipDate":"9999-12-31T23:59:59Z","complete":true,"status":""}`,
		`{"id":9223372036854775808,"petId":1,"quantity":1,"shipDate":"2026-01-02T00:00:00Z","complete":true,"status":"pending"}`,
		`{"id":1,"petId":1,"quantity":2147483648,"shipDate":"2026-01-02T00:00:00Z","complete":true,"status":"pending"}`,
		`{"id":01,"petId":1,"quantity":1,"shipDate":"2026-01-02T00:00:00Z","complete":true,"status":"pending"}`,
		`{"id":1.0,"petId":1,"quantity":1,"shipDate":"2026-01-02T00:00:00Z","complete":true,"status":"pending"}`,
		`{"ID":1,"petId":1,"quantity":1,"shipDate":"2026-01-02T00:00:00Z","complete":true,"status":"pending"}`,
		`{"id":1,"id":2,"quantity":1,"shipDate":"2026-01-02T00:00:00Z","complete":true,"status":"pending"}`,
		`{"id":1,"petId":1,"quantity":1,"shipDate":"2026-02-30T00:00:00Z","complete":true,"status":"pending"}`,
		`{"id":1,"petId":1,"quantity":1,"shipDate":"2026-01-02T00:00:00Z","complete":true,"status":"pend\u0069ng"}`,
		`{"id":1,"petId":1,"quantity":1,"shipDate":"2026-01-02T00:00:00Z","complete":truex,"status":"pending"}`,
		`{"id":1,"petId":1,"quantity":1,"shipDate":"2026-01-02T00:00:00Z","complete":true,"status":"pending"} x`,
		`{"id":1,"petId":1,"quantity":1,"shipDate":"2026-01-02T00:00:00Z","complete":true,"status":"pending",}`,
		`{"id":1,"petId":1,"quantity":1,"shipDate":"2026-01-02T00:00:00Z","complete":null,"status":"pending"}`,
		`{"id":1,"petId":1,"quantity":1,"shipDate":"2026-01-02T00:00:00Z","complete":true}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := plainOrder(data)
		if !ok {
			return
		}
		var general Order
		if err := general.decode(data); err != nil {
			t.Fatalf("%q: the fast path took %+v, the general decoder refused it: %v", data, fast, err)
		}
		if fmt.Sprintf("%#v", general) != fmt.Sprintf("%#v", fast) {
			t.Fatalf("%q: fast %#v, general %#v", data, fast, general)
		}
	})
}

// TestPlainOrderTakesDataFiles: the fast path reads what data files hold; else it is not fast.
func TestPlainOrderTakesDataFiles(t *testing.T) {
	for _, s := range []string{
		`{"id":1,"petId":1001,"quantity":2,"shipDate":"2026-01-02T00:00:00Z","complete":true,"status":"shipped"}`,
		"{\n  \"id\": 4, \"petId\": 1004, \"quantity\": 1, \"shipDate\": \"2026-11-05T13:00:00+02:00\", \"complete\": false, \"status\": \"cancelled\"\n}",
	} {
		if _, ok := plainOrder([]byte(s)); !ok {
			t.Errorf("the fast path refused %s", s)
		}
	}
}
