package order_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd"
	"github.com/petstore/orderd/internal/jsonfile"
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

// importFile reads data as `orderd import` reads a file named name: jsonfile.Each, checking
// each record with order.CheckEach.
func importFile[T order.Record, R jsonfile.Record[T]](name, data string) ([]T, error) {
	var out []T
	err := jsonfile.Each[T, R](name, strings.NewReader(data), order.CheckEach[T](), 2, func(batch []T) error {
		out = append(out, batch...)
		return nil
	})
	return out, err
}

// TestImportFieldNamesAreExactAndOnce: a record's field names are the contract's, each once
// ("no other field"). Before, a record the fast path did not take went to encoding/json, which
// took any case of a name ("ID", "Status", "ſtatus") and the last of a repeated one: such
// files were imported, as another record than they say (cancelled, or under another id).
// Now each is refused, placed and named as any other bad record; the files below put it on
// line 3, after a good record.
func TestImportFieldNamesAreExactAndOnce(t *testing.T) {
	const (
		date    = `"shipDate":"2026-11-05T13:00:00Z"`
		good    = `{"id":1,"petId":1001,"quantity":2,` + date + `,"complete":false,"status":"pending"}`
		goodPet = `{"id":1,"name":"Rex","status":"available"}`
	)
	file := func(bad string) string { return "[\n" + good + ",\n" + bad + "\n]\n" }
	petFile := func(bad string) string { return "[\n" + goodPet + ",\n" + bad + "\n]\n" }
	for name, tc := range map[string]struct {
		orders bool // else pets
		data   string
		want   string
	}{
		"order names capitalized": {true, file(`{"ID":4,"PETID":1004,"Quantity":1,"ShipDate":"2026-11-05T13:00:00Z","Complete":true,"Status":"shipped"}`),
			`orders.json:3:1: order: unknown field "ID"`},
		"order petId in lower case": {true, file(`{"id":4,"petid":1004,"quantity":1,` + date + `,"complete":true,"status":"shipped"}`),
			`orders.json:3:1: order 4: unknown field "petid"`},
		"order status and Status": {true, file(`{"id":4,"petId":1004,"quantity":1,` + date + `,"complete":false,"status":"pending","Status":"cancelled"}`),
			`orders.json:3:1: order 4: unknown field "Status"`},
		"order status with a long s": {true, file(`{"id":4,"petId":1004,"quantity":1,` + date + `,"complete":false,"ſtatus":"pending"}`),
			`orders.json:3:1: order 4: unknown field "ſtatus"`},
		"order id twice": {true, file(`{"id":4,"petId":1004,"quantity":1,` + date + `,"complete":false,"status":"pending","id":5}`),
			`orders.json:3:1: order: repeated field "id"`},
		"order status twice": {true, file(`{"id":4,"petId":1004,"quantity":1,` + date + `,"complete":false,"status":"pending","status":"cancelled"}`),
			`orders.json:3:1: order 4: repeated field "status"`},
		"order complete twice, the same": {true, file(`{"id":4,"petId":1004,"quantity":1,` + date + `,"complete":false,"status":"pending","complete":false}`),
			`orders.json:3:1: order 4: repeated field "complete"`},
		"order status twice, escaped": {true, file(`{"id":4,"petId":1004,"quantity":1,` + date + `,"complete":false,"status":"p\u0065nding","status":"cancelled"}`),
			`orders.json:3:1: order 4: repeated field "status"`},
		// Nor in an object value: the name in it is none of the record's.
		"order petId an object": {true, file(`{"id":4,"petId":{"PETID":1004,"petId":1},"quantity":1,` + date + `,"complete":true,"status":"shipped"}`),
			`orders.json:3:1: order 4: petId: want an int64, got object`},
		"pet names capitalized": {false, petFile(`{"ID":7,"NAME":"Max","Status":"sold"}`),
			`pets.json:3:1: pet: unknown field "ID"`},
		"pet ID and id": {false, petFile(`{"ID":7,"name":"Max","status":"sold","id":8}`),
			`pets.json:3:1: pet 8: unknown field "ID"`},
		"pet id twice": {false, petFile(`{"id":7,"name":"Max","status":"sold","id":8}`),
			`pets.json:3:1: pet: repeated field "id"`},
		"pet name twice": {false, petFile(`{"id":7,"name":"Max","status":"sold","name":"R\u0065x"}`),
			`pets.json:3:1: pet 7: repeated field "name"`},
	} {
		t.Run(name, func(t *testing.T) {
			var got any
			var err error
			if tc.orders {
				got, err = importFile[order.Order]("orders.json", tc.data)
			} else {
				got, err = importFile[order.Pet]("pets.json", tc.data)
			}
			if errString(err) != tc.want {
				t.Fatalf("error %q, want %q (read %+v)", errString(err), tc.want, got)
			}
		})
	}

	// Names as the contract has them are taken in any order, with any space, and escaped.
	want := order.Order{ID: 4, PetID: 1004, Quantity: 1, ShipDate: time.Date(2026, 11, 5, 13, 0, 0, 0, time.UTC), Complete: true, Status: order.StatusShipped}
	for name, data := range map[string]string{
		"another order":    `{"status":"shipped","complete":true,` + date + `,"quantity":1,"petId":1004,"id":4}`,
		"space":            "{\n\t\"id\" : 4 ,\r\n \"petId\":1004,\"quantity\":\t1,\"shipDate\": \"2026-11-05T13:00:00Z\",\"complete\":true,\"status\":\"shipped\"\n}",
		"an escaped name":  `{"\u0069d":4,"petId":1004,"quantity":1,` + date + `,"complete":true,"status":"shipped"}`,
		"an escaped value": `{"status":"sh\u0069pped","id":4,"petId":1004,"quantity":1,` + date + `,"complete":true}`,
	} {
		got, err := importFile[order.Order]("orders.json", file(data))
		if err == nil && len(got) == 2 && got[1].ShipDate.Equal(want.ShipDate) {
			got[1].ShipDate = want.ShipDate
		}
		if err != nil || len(got) != 2 || got[1] != want {
			t.Errorf("%s: read %+v, %v; want order 1 and %+v", name, got, err, want)
		}
	}
	for name, tc := range map[string]struct{ data, name string }{
		"another order": {`{"status":"sold","name":"Max","id":7}`, "Max"},
		"space":         {"{ \"id\" :7,\n\t\"name\": \"Max\" , \"status\":\"sold\" }", "Max"},
		// Names are read as JSON has them: not in a string value.
		"names in a value": {`{"id":7,"name":"\"M,a{x\",\"id\":8,\"ID\":[","status":"sold"}`, `"M,a{x","id":8,"ID":[`},
	} {
		got, err := importFile[order.Pet]("pets.json", petFile(tc.data))
		if err != nil || len(got) != 2 || got[1] != (order.Pet{ID: 7, Name: tc.name, Status: order.PetSold}) {
			t.Errorf("%s: read %+v, %v; want pet 1 and pet 7 named %s", name, got, err, tc.name)
		}
	}
}

// FuzzOrderJSON: an order UnmarshalJSON takes has the contract's six names, each once, and the
// values encoding/json reads from the same bytes.
func FuzzOrderJSON(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"petId":1001,"quantity":2,"shipDate":"2026-01-02T00:00:00Z","complete":true,"status":"shipped"}`,
		"{ \"status\" : \"x\" ,\n\t\"complete\":false,\"shipDate\":\"2026-01-02T00:00:00.5+01:00\",\"quantity\":0,\"petId\":0,\"id\":-0 }",
		`{"id":9223372036854775807,"petId":-1,"quantity":2147483647,"shipDate":"9999-12-31T23:59:59Z","complete":true,"status":""}`,
		`{"id":1,"petId":1,"quantity":1,"shipDate":"2026-01-02T00:00:00Z","complete":true,"status":"pend\u0069ng","\u0069d":2}`,
		`{"id":1,"petId":{"id":1},"quantity":1,"shipDate":"2026-01-02T00:00:00Z","complete":true,"status":"` + "\xff" + `"}`,
		`{"id":1,"petId":1,"quantity":1,"shipDate":"2026-01-02T00:00:00Z","complete":true,"status":"a\"b","Status":"c"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var o order.Order
		if json.Unmarshal(data, &o) != nil {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		var names []string
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			t.Fatalf("%q: taken, but not an object", data)
		}
		for dec.More() {
			name, _ := dec.Token()
			names = append(names, name.(string))
			dec.Decode(new(json.RawMessage))
		}
		if slices.Sort(names); !slices.Equal(names, []string{"complete", "id", "petId", "quantity", "shipDate", "status"}) {
			t.Fatalf("%q: taken with the names %q", data, names)
		}
		var want struct {
			ID       int64  `json:"id"`
			PetID    int64  `json:"petId"`
			Quantity int32  `json:"quantity"`
			ShipDate string `json:"shipDate"`
			Complete bool   `json:"complete"`
			Status   string `json:"status"`
		}
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("%q: taken as %+v, refused by encoding/json: %v", data, o, err)
		}
		date, err := time.Parse(time.RFC3339, want.ShipDate)
		if err != nil || !date.Equal(o.ShipDate) || o.ID != want.ID || o.PetID != want.PetID || o.Quantity != want.Quantity ||
			o.Complete != want.Complete || string(o.Status) != want.Status {
			t.Fatalf("%q: taken as %+v; encoding/json reads %+v", data, o, want)
		}
	})
}
