package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openapi "github.com/petstore/orderd"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/redistest"
	"github.com/petstore/orderd/internal/service"
)

// Records of testdata/demo, for the files of the tests to change.
var (
	demoOrder4  = map[string]string{"id": "4", "petId": "1004", "quantity": "1", "shipDate": `"2026-11-05T13:00:00Z"`, "complete": "true", "status": `"shipped"`}
	demoOrder5  = map[string]string{"id": "5", "petId": "1005", "quantity": "2", "shipDate": `"2026-11-06T14:00:00Z"`, "complete": "false", "status": `"pending"`}
	demoPet1003 = map[string]string{"id": "1003", "name": `"Bella"`, "status": `"available"`}
	demoPet1004 = map[string]string{"id": "1004", "name": `"Max"`, "status": `"available"`}
)

// TestImportRefusesARecordTheContractDoesNotAllow: a record of the orders or the pets file
// that the contract's Order or Pet does not allow (a field missing or null, of another type,
// out of range, a date that is not RFC 3339) stops the import before anything is written,
// in either store: exit 2 and one line naming the file, line, column, record and field.
// Before the check, an order without shipDate was imported with the zero date.
func TestImportRefusesARecordTheContractDoesNotAllow(t *testing.T) {
	doc, err := openapi.Versions[0].Load()
	if err != nil {
		t.Fatal(err)
	}
	type badRecord struct {
		name, file string            // file: "orders" or "pets"
		change     map[string]string // of demoOrder4 or demoPet1003
		want       string
	}
	var cases []badRecord
	for _, f := range doc.Components.Schemas["Order"].Value.Required {
		who := "order 4: "
		if f == "id" {
			who = "order: "
		}
		cases = append(cases,
			badRecord{"order without " + f, "orders", map[string]string{f: ""}, who + f + " missing"},
			badRecord{"order with null " + f, "orders", map[string]string{f: "null"}, who + f + ": must not be null"})
	}
	for _, f := range doc.Components.Schemas["Pet"].Value.Required {
		who := "pet 1003: "
		if f == "id" {
			who = "pet: "
		}
		cases = append(cases,
			badRecord{"pet without " + f, "pets", map[string]string{f: ""}, who + f + " missing"},
			badRecord{"pet with null " + f, "pets", map[string]string{f: "null"}, who + f + ": must not be null"})
	}
	cases = append(cases,
		badRecord{"order id a string", "orders", map[string]string{"id": `"4"`}, "order: id: want an int64, got string"},
		badRecord{"order id above int64", "orders", map[string]string{"id": "9223372036854775808"}, "order: id: want an int64, got number 9223372036854775808"},
		badRecord{"order id negative", "orders", map[string]string{"id": "-4"}, "order -4: id: must not be negative"},
		badRecord{"petId negative", "orders", map[string]string{"petId": "-1"}, "order 4: petId: must not be negative, got -1"},
		badRecord{"quantity above int32", "orders", map[string]string{"quantity": "2147483648"}, "order 4: quantity: want an int32, got number 2147483648"},
		badRecord{"quantity negative", "orders", map[string]string{"quantity": "-1"}, "order 4: quantity: must not be negative, got -1"},
		badRecord{"quantity a fraction", "orders", map[string]string{"quantity": "1.5"}, "order 4: quantity: want an int32, got number 1.5"},
		badRecord{"complete a string", "orders", map[string]string{"complete": `"yes"`}, "order 4: complete: want true or false, got string"},
		badRecord{"status unknown", "orders", map[string]string{"status": `"lost"`}, `order 4: status: "lost" is not pending, shipped or cancelled`},
		badRecord{"shipDate a date only", "orders", map[string]string{"shipDate": `"2026-11-05"`}, `order 4: shipDate: "2026-11-05": must be an RFC 3339 date-time`},
		badRecord{"shipDate one-digit hour", "orders", map[string]string{"shipDate": `"2026-11-05T1:00:00Z"`}, `order 4: shipDate: "2026-11-05T1:00:00Z": must be an RFC 3339 date-time`},
		badRecord{"shipDate beyond 9999 in UTC", "orders", map[string]string{"shipDate": `"9999-12-31T23:00:00-02:00"`}, "order 4: shipDate: 9999-12-31T23:00:00-02:00 is outside the years 0000 to 9999 in UTC"},
		badRecord{"order unknown field", "orders", map[string]string{"shipped": "true"}, `order 4: unknown field "shipped"`},
		// Names are exact: encoding/json alone took "Status" as status, the last one winning.
		badRecord{"order status twice, in two cases", "orders", map[string]string{"Status": `"cancelled"`}, `order 4: unknown field "Status"`},
		badRecord{"pet name too long", "pets", map[string]string{"name": `"` + strings.Repeat("x", 201) + `"`}, "pet 1003: name: 201 characters, more than 200"},
		badRecord{"pet status unknown", "pets", map[string]string{"status": `"lost"`}, `pet 1003: status: "lost" is not available, pending or sold`},
		badRecord{"pet id a string", "pets", map[string]string{"id": `"1003"`}, "pet: id: want an int64, got string"},
		badRecord{"pet id twice, in two cases", "pets", map[string]string{"ID": "1004"}, `pet 1003: unknown field "ID"`},
	)

	srv := redistest.Start(t)
	for store, tc := range map[string]struct {
		args      []string
		unchanged string // what importing the demo files again reports when the store holds them
	}{
		"sqlite": {[]string{"--db", filepath.Join(t.TempDir(), "orderd.db")}, "imported 21 orders (0 added, 0 updated) and 7 pets (0 added, 0 updated)"},
		"redis":  {[]string{"--redis-url", srv.URL(), "--redis-prefix", redistest.Prefix(t)}, "imported 21 orders (0 fields changed) and 7 pets"},
	} {
		t.Run(store, func(t *testing.T) {
			demo := append([]string{"import", "--orders", "../../testdata/demo/orders.json", "--pets", "../../testdata/demo/pets.json"}, tc.args...)
			if _, errOut, code := orderd(t, nil, demo...); code != 0 {
				t.Fatalf("import of the demo files: exit %d: %s", code, errOut)
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					dir := t.TempDir()
					// Each file holds a valid change of another record on its line 2, and the
					// bad one goes on line 3: neither may be written.
					orders := "[\n" + record(t, demoOrder5, map[string]string{"quantity": "99"}) + "\n]\n"
					pets := "[\n" + record(t, demoPet1004, map[string]string{"name": `"Max II"`}) + "\n]\n"
					if c.file == "orders" {
						orders = strings.Replace(orders, "\n]", ",\n"+record(t, demoOrder4, c.change)+"\n]", 1)
					} else {
						pets = strings.Replace(pets, "\n]", ",\n"+record(t, demoPet1003, c.change)+"\n]", 1)
					}
					for name, data := range map[string]string{"orders": orders, "pets": pets} {
						if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(data), 0o600); err != nil {
							t.Fatal(err)
						}
					}
					args := append([]string{"import", "--orders", filepath.Join(dir, "orders.json"), "--pets", filepath.Join(dir, "pets.json")}, tc.args...)
					_, errOut, code := orderd(t, nil, args...)
					want := "orderd: " + filepath.Join(dir, c.file+".json") + ":3:1: " + c.want
					if code != 2 || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 {
						t.Fatalf("exit %d, stderr %q; want exit 2 and one line starting %q", code, errOut, want)
					}
					if _, errOut, code := orderd(t, nil, demo...); code != 0 || !strings.Contains(errOut, tc.unchanged) {
						t.Fatalf("importing the demo files again: exit %d, %q; want %q: the refused import wrote something", code, errOut, tc.unchanged)
					}
				})
			}
		})
	}
}

// record is ordertest.Record as a string.
func record(t *testing.T, base, change map[string]string) string {
	return string(ordertest.Record(t, base, change))
}

// TestImportOfManyBatchesRefusesABadLastRecord: a file of more orders than two batches hold
// (read twice: checked through, then written) whose last record repeats the first one's id is
// refused with that record's place, and leaves either store as it was; without that record,
// every order is written, as the summary counts.
func TestImportOfManyBatchesRefusesABadLastRecord(t *testing.T) {
	n := 2*service.ImportBatch + 1
	var b strings.Builder
	b.WriteString("[\n")
	for i := range n {
		fmt.Fprintf(&b, `{"id":%d,"petId":%d,"quantity":1,"shipDate":"2026-11-05T13:00:00Z","complete":false,"status":"pending"},`+"\n", 1000+i, i)
	}
	good := strings.TrimSuffix(b.String(), ",\n") + "\n]\n"
	bad := b.String() + `  {"id":1000,"petId":1,"quantity":1,"shipDate":"2026-11-05T13:00:00Z","complete":false,"status":"pending"}` + "\n]\n"
	dir := t.TempDir()
	goodFile, badFile := filepath.Join(dir, "good.json"), filepath.Join(dir, "bad.json")
	for f, data := range map[string]string{goodFile: good, badFile: bad} {
		if err := os.WriteFile(f, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv := redistest.Start(t)
	db := filepath.Join(t.TempDir(), "orderd.db")
	for store, tc := range map[string]struct {
		args          []string
		added, demoed string // the summaries of the good file's first import, and of the demo's again
	}{
		"sqlite": {[]string{"--db", db},
			fmt.Sprintf("imported %d orders (%d added, 0 updated) and 0 pets (0 added, 0 updated) into %s\n", n, n, db),
			"imported 21 orders (0 added, 0 updated) and 7 pets (0 added, 0 updated) into " + db + "\n"},
		"redis": {[]string{"--redis-url", srv.URL(), "--redis-prefix", redistest.Prefix(t)},
			fmt.Sprintf("imported %d orders (%d fields changed) and 0 pets\n", n, 2*n),
			"imported 21 orders (0 fields changed) and 7 pets\n"},
	} {
		t.Run(store, func(t *testing.T) {
			demo := append([]string{"import", "--orders", "../../testdata/demo/orders.json", "--pets", "../../testdata/demo/pets.json"}, tc.args...)
			if _, errOut, code := orderd(t, nil, demo...); code != 0 {
				t.Fatalf("import of the demo files: exit %d: %s", code, errOut)
			}
			_, errOut, code := orderd(t, nil, append([]string{"import", "--orders", badFile}, tc.args...)...)
			if want := fmt.Sprintf("orderd: %s:%d:3: order 1000: duplicate id\n", badFile, n+2); code != 2 || errOut != want {
				t.Fatalf("exit %d, stderr %q; want exit 2 and %q", code, errOut, want)
			}
			if _, errOut, code := orderd(t, nil, demo...); code != 0 || errOut != tc.demoed {
				t.Fatalf("the demo files again: exit %d, %q; want %q", code, errOut, tc.demoed)
			}
			if _, errOut, code := orderd(t, nil, append([]string{"import", "--orders", goodFile}, tc.args...)...); code != 0 || errOut != tc.added {
				t.Fatalf("the good file: exit %d, %q; want %q: the refused import wrote some", code, errOut, tc.added)
			}
		})
	}
}
