package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/sqlitestore"
)

func TestListOrdersSendsEveryFieldExactly(t *testing.T) {
	h := newHarness(t)
	res, body := h.authed(t, "GET", "/v1/store/orders")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var list []map[string]any
	if err := dec.Decode(&list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 6 {
		t.Fatalf("got %d orders, want 6", len(list))
	}
	for _, o := range list {
		for _, f := range []string{"id", "petId", "quantity", "shipDate", "complete", "status"} {
			if _, ok := o[f]; !ok {
				t.Errorf("order %v lacks %s", o["id"], f)
			}
		}
	}
	last := list[5]
	if last["id"].(json.Number) != "9223372036854775807" || last["petId"].(json.Number) != "9223372036854775806" {
		t.Errorf("int64 edges not exact: id %v petId %v", last["id"], last["petId"])
	}
	if list[4]["id"].(json.Number) != "9223372036854775806" || list[4]["petId"].(json.Number) != "9223372036854775807" {
		t.Errorf("int64 edges not exact: id %v petId %v", list[4]["id"], list[4]["petId"])
	}
	if got := last["shipDate"]; got != "2026-11-20T08:30:00.123456789Z" {
		t.Errorf("shipDate %v, want RFC 3339 in UTC with its fraction", got)
	}
	if list[0]["complete"] != false || list[0]["quantity"].(json.Number) != "0" {
		t.Errorf("zero values must be sent, got %v", list[0])
	}
}

func TestListOfNoOrdersIsAnEmptyArray(t *testing.T) {
	empty := sqlitestore.NewOrders(openDB(t))
	h := newHarness(t, func(c *api.Config) { c.Orders = empty })
	res, body := h.authed(t, "GET", "/v1/store/orders")
	if res.StatusCode != 200 || strings.TrimSpace(string(body)) != "[]" {
		t.Fatalf("got %d %q, want 200 []", res.StatusCode, body)
	}
}

// TestCancelStateTable walks every row of the cancel state table (pending→cancelled,
// cancelled→cancelled, shipped→409, unknown→404, as openapi.yaml states them), and checks the list
// afterwards: a cancelled order stays in it, with status cancelled.
func TestCancelStateTable(t *testing.T) {
	h := newHarness(t)
	for _, row := range []struct {
		name   string
		id     string
		status int
		code   gen.ErrorCode
		after  string
	}{
		{"pending→cancelled", "1", 204, "", "cancelled"},
		{"cancelled again→204, unchanged", "1", 204, "", "cancelled"},
		{"already cancelled→204", "3", 204, "", "cancelled"},
		{"shipped→409, unchanged", "2", 409, gen.ErrorCodeOrderAlreadyShipped, "shipped"},
		{"no such id→404", "4", 404, gen.ErrorCodeOrderNotFound, ""},
		{"max int64 pending→cancelled", "9223372036854775807", 204, "", "cancelled"},
		{"max int64-1 shipped→409", "9223372036854775806", 409, gen.ErrorCodeOrderAlreadyShipped, "shipped"},
	} {
		t.Run(row.name, func(t *testing.T) {
			res, body := h.authed(t, "DELETE", "/v1/store/orders/"+row.id)
			if row.code != "" {
				e := wantError(t, res, body, row.status, row.code)
				if !strings.Contains(e.Message, row.id) {
					t.Errorf("message %q does not name order %s", e.Message, row.id)
				}
			} else if res.StatusCode != row.status || len(body) != 0 {
				t.Fatalf("got %d %q, want %d with no body", res.StatusCode, body, row.status)
			}
			if row.after != "" {
				if got := statusInList(t, h, row.id); got != row.after {
					t.Fatalf("order %s is %q after, want %q", row.id, got, row.after)
				}
			}
		})
	}
}

func statusInList(t *testing.T, h *harness, id string) string {
	t.Helper()
	_, body := h.authed(t, "GET", "/v1/store/orders")
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var list []map[string]any
	if err := dec.Decode(&list); err != nil {
		t.Fatal(err)
	}
	for _, o := range list {
		if o["id"].(json.Number).String() == id {
			return o["status"].(string)
		}
	}
	return ""
}

func TestConcurrentCancelsThroughHTTPAllAnswer204(t *testing.T) {
	h := newHarness(t)
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res, body := h.authed(t, "DELETE", "/v1/store/orders/1"); res.StatusCode != 204 {
				t.Errorf("got %d %s", res.StatusCode, body)
			}
		}()
	}
	wg.Wait()
	if got := statusInList(t, h, "1"); got != "cancelled" {
		t.Fatalf("order 1 is %q", got)
	}
}

func TestListETag(t *testing.T) {
	h := newHarness(t)
	res, _ := h.authed(t, "GET", "/v1/store/orders")
	tag := res.Header.Get("ETag")
	if !strings.HasPrefix(tag, `W/"`) {
		t.Fatalf("ETag %q, want a weak tag", tag)
	}
	for _, inm := range []string{tag, strings.TrimPrefix(tag, "W/"), `"other", ` + tag, "*", `"x,*",` + tag} {
		res, body := h.authed(t, "GET", "/v1/store/orders", "If-None-Match", inm)
		if res.StatusCode != http.StatusNotModified || len(body) != 0 || res.Header.Get("ETag") != tag {
			t.Fatalf("If-None-Match %s: got %d, ETag %q, body %q; want 304 with the same tag", inm, res.StatusCode, res.Header.Get("ETag"), body)
		}
	}
	// An opaque-tag may hold ',' and '*' (RFC 9110 §8.8.3): "x,*,y" is one stale tag, and
	// "*" matches only as the whole field (§13.1.2).
	for _, inm := range []string{`W/"stale"`, `"x,*,y"`, `W/"*", "*"`} {
		if res, _ := h.authed(t, "GET", "/v1/store/orders", "If-None-Match", inm); res.StatusCode != 200 {
			t.Fatalf("If-None-Match %s (stale tags) got %d, want 200", inm, res.StatusCode)
		}
	}
	h.authed(t, "DELETE", "/v1/store/orders/1")
	res, _ = h.authed(t, "GET", "/v1/store/orders", "If-None-Match", tag)
	if res.StatusCode != 200 || res.Header.Get("ETag") == tag {
		t.Fatalf("after a cancel the old tag got %d with ETag %q; want 200 and a new tag", res.StatusCode, res.Header.Get("ETag"))
	}
}
