package order_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
)

var (
	order4 = map[string]string{"id": "4", "petId": "1004", "quantity": "1", "shipDate": `"2026-11-05T13:00:00Z"`, "complete": "true", "status": `"shipped"`}
	pet7   = map[string]string{"id": "7", "name": `"Rex"`, "status": `"available"`}
)

// required is the list of required properties of a schema of openapi.yaml, so that the
// tests check every field the contract requires, and one it comes to require too.
func required(t *testing.T, schema string) []string {
	t.Helper()
	doc, err := orderd.Versions[0].Load()
	if err != nil {
		t.Fatal(err)
	}
	s := doc.Components.Schemas[schema].Value
	if len(s.Required) == 0 || len(s.Required) != len(s.Properties) {
		t.Fatalf("%s requires %v of %d properties; the tests expect every property to be required", schema, s.Required, len(s.Properties))
	}
	return s.Required
}

func TestOrderJSONNeedsEveryRequiredField(t *testing.T) {
	for _, field := range required(t, "Order") {
		who := "order 4"
		if field == "id" {
			who = "order"
		}
		for what, change := range map[string]string{field + " missing": "", field + ": must not be null": "null"} {
			t.Run(what, func(t *testing.T) {
				var o order.Order
				err := json.Unmarshal(ordertest.Record(t, order4, map[string]string{field: change}), &o)
				if got, want := errString(err), who+": "+what; got != want {
					t.Fatalf("error %q, want %q", got, want)
				}
			})
		}
	}
}

func TestPetJSONNeedsEveryRequiredField(t *testing.T) {
	for _, field := range required(t, "Pet") {
		who := "pet 7"
		if field == "id" {
			who = "pet"
		}
		for what, change := range map[string]string{field + " missing": "", field + ": must not be null": "null"} {
			t.Run(what, func(t *testing.T) {
				var p order.Pet
				err := json.Unmarshal(ordertest.Record(t, pet7, map[string]string{field: change}), &p)
				if got, want := errString(err), who+": "+what; got != want {
					t.Fatalf("error %q, want %q", got, want)
				}
			})
		}
	}
}

func TestOrderJSON(t *testing.T) {
	ok := map[string]struct {
		change map[string]string
		want   order.Order
	}{
		"OK": {nil, order.Order{ID: 4, PetID: 1004, Quantity: 1, ShipDate: time.Date(2026, 11, 5, 13, 0, 0, 0, time.UTC), Complete: true, Status: order.StatusShipped}},
		// Zero values given are values like any other: only a field left out is refused.
		"zero values": {map[string]string{"id": "0", "petId": "0", "quantity": "0", "complete": "false", "shipDate": `"0000-01-01T00:00:00Z"`},
			order.Order{ShipDate: time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), Status: order.StatusShipped}},
		"largest values": {map[string]string{"id": "9223372036854775807", "petId": "9223372036854775807", "quantity": "2147483647", "shipDate": `"9999-12-31T23:59:59.999999999Z"`},
			order.Order{ID: 1<<63 - 1, PetID: 1<<63 - 1, Quantity: 1<<31 - 1, ShipDate: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), Complete: true, Status: order.StatusShipped}},
		"offset and fraction": {map[string]string{"shipDate": `"2026-11-05T14:30:00.5+01:30"`},
			order.Order{ID: 4, PetID: 1004, Quantity: 1, ShipDate: time.Date(2026, 11, 5, 13, 0, 0, 5e8, time.UTC), Complete: true, Status: order.StatusShipped}},
	}
	for name, tc := range ok {
		t.Run(name, func(t *testing.T) {
			var o order.Order
			if err := json.Unmarshal(ordertest.Record(t, order4, tc.change), &o); err != nil {
				t.Fatal(err)
			}
			if !o.ShipDate.Equal(tc.want.ShipDate) {
				t.Fatalf("shipDate %v, want %v", o.ShipDate, tc.want.ShipDate)
			}
			o.ShipDate = tc.want.ShipDate
			if o != tc.want {
				t.Fatalf("got %+v, want %+v", o, tc.want)
			}
		})
	}

	longDate := `"2026-11-05T13:00:00.` + strings.Repeat("0", order.MaxShipDateLength-len("2026-11-05T13:00:00.Z")+1) + `Z"`
	for name, tc := range map[string]struct {
		change map[string]string
		want   string
	}{
		"id a string":             {map[string]string{"id": `"4"`}, "order: id: want an int64, got string"},
		"id above int64":          {map[string]string{"id": "9223372036854775808"}, "order: id: want an int64, got number 9223372036854775808"},
		"id not an integer":       {map[string]string{"id": "4.5"}, "order: id: want an int64, got number 4.5"},
		"petId above int64":       {map[string]string{"petId": "9223372036854775808"}, "order 4: petId: want an int64, got number 9223372036854775808"},
		"quantity above int32":    {map[string]string{"quantity": "2147483648"}, "order 4: quantity: want an int32, got number 2147483648"},
		"quantity not an integer": {map[string]string{"quantity": "1e0"}, "order 4: quantity: want an int32, got number 1e0"},
		"complete a string":       {map[string]string{"complete": `"true"`}, "order 4: complete: want true or false, got string"},
		"status a number":         {map[string]string{"status": "1"}, "order 4: status: want a string, got number"},
		"shipDate a number":       {map[string]string{"shipDate": "1762347600"}, "order 4: shipDate: want a string, got number"},
		"shipDate a date only":    {map[string]string{"shipDate": `"2026-11-05"`}, `order 4: shipDate: "2026-11-05": must be an RFC 3339 date-time, such as 2026-11-16T00:00:00Z`},
		"shipDate one-digit hour": {map[string]string{"shipDate": `"2026-11-05T1:00:00Z"`}, `order 4: shipDate: "2026-11-05T1:00:00Z": must be an RFC 3339 date-time, such as 2026-11-16T00:00:00Z`},
		"shipDate comma fraction": {map[string]string{"shipDate": `"2026-11-05T13:00:00,5Z"`}, `order 4: shipDate: "2026-11-05T13:00:00,5Z": must be an RFC 3339 date-time, such as 2026-11-16T00:00:00Z`},
		"shipDate without zone":   {map[string]string{"shipDate": `"2026-11-05T13:00:00"`}, `order 4: shipDate: "2026-11-05T13:00:00": must be an RFC 3339 date-time, such as 2026-11-16T00:00:00Z`},
		"shipDate with a space":   {map[string]string{"shipDate": `"2026-11-05 13:00:00Z"`}, `order 4: shipDate: "2026-11-05 13:00:00Z": must be an RFC 3339 date-time, such as 2026-11-16T00:00:00Z`},
		"shipDate February 30":    {map[string]string{"shipDate": `"2026-02-30T13:00:00Z"`}, `order 4: shipDate: "2026-02-30T13:00:00Z": February 2026 has no day 30: it has 28 days`},
		"shipDate hour 24":        {map[string]string{"shipDate": `"2026-11-05T24:00:00Z"`}, `order 4: shipDate: "2026-11-05T24:00:00Z": hour 24 is out of range: 00 to 23`},
		"shipDate offset +24:00":  {map[string]string{"shipDate": `"2026-11-05T13:00:00+24:00"`}, `order 4: shipDate: "2026-11-05T13:00:00+24:00": offset +24:00 is out of range: hours 00 to 23, minutes 00 to 59`},
		"shipDate second 60":      {map[string]string{"shipDate": `"2026-12-31T23:59:60Z"`}, `order 4: shipDate: "2026-12-31T23:59:60Z": second 60 (a leap second) is not accepted: seconds are 00 to 59`},
		"shipDate empty":          {map[string]string{"shipDate": `""`}, `order 4: shipDate: "": must be an RFC 3339 date-time, such as 2026-11-16T00:00:00Z`},
		"shipDate too long":       {map[string]string{"shipDate": longDate}, "order 4: shipDate: 65 characters, more than 64"},
		"unknown field":           {map[string]string{"shipdate_": `"x"`}, `order 4: unknown field "shipdate_"`},
	} {
		t.Run(name, func(t *testing.T) {
			var o order.Order
			err := json.Unmarshal(ordertest.Record(t, order4, tc.change), &o)
			if got := errString(err); got != tc.want {
				t.Fatalf("error %q, want %q", got, tc.want)
			}
			if o != (order.Order{}) {
				t.Fatalf("a refused record was decoded into %+v", o)
			}
		})
	}
	for _, data := range []string{"null", "[]", `"order"`, "4"} {
		var o order.Order
		if got := errString(json.Unmarshal([]byte(data), &o)); got != "order: want a JSON object" {
			t.Fatalf("%s: error %q", data, got)
		}
	}
}

func TestPetJSON(t *testing.T) {
	var p order.Pet
	if err := json.Unmarshal(ordertest.Record(t, pet7, map[string]string{"name": `""`}), &p); err != nil || p != (order.Pet{ID: 7, Status: order.PetAvailable}) {
		t.Fatalf("a pet with an empty name: %+v, %v", p, err)
	}
	for name, tc := range map[string]struct {
		change map[string]string
		want   string
	}{
		"id a string":    {map[string]string{"id": `"7"`}, "pet: id: want an int64, got string"},
		"id above int64": {map[string]string{"id": "9223372036854775808"}, "pet: id: want an int64, got number 9223372036854775808"},
		"name a number":  {map[string]string{"name": "7"}, "pet 7: name: want a string, got number"},
		"status a bool":  {map[string]string{"status": "true"}, "pet 7: status: want a string, got bool"},
		"unknown field":  {map[string]string{"age": "3"}, `pet 7: unknown field "age"`},
	} {
		t.Run(name, func(t *testing.T) {
			var p order.Pet
			if got := errString(json.Unmarshal(ordertest.Record(t, pet7, tc.change), &p)); got != tc.want {
				t.Fatalf("error %q, want %q", got, tc.want)
			}
		})
	}
}
