package api_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/genv2"
	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/pagetoken"
	"github.com/petstore/orderd/internal/pagetoken/pagetokentest"
	"github.com/petstore/orderd/internal/sqlitestore"
	"github.com/petstore/orderd/internal/sqlitestore/sqlitetest"
)

// findHarness is the harness serving exactly orders, in a SQLite file of its own, with a key
// whose limits walks of hundreds of pages cannot spend.
type findHarness struct {
	*harness
	orders []order.Order
	store  *sqlitestore.Orders
	auth   []string
}

func newFindHarness(tb testing.TB, orders []order.Order) *findHarness {
	tb.Helper()
	db := openDB(tb)
	if _, err := db.Import(context.Background(), orders, nil); err != nil {
		tb.Fatal(err)
	}
	store := sqlitestore.NewOrders(db)
	h := newHarness(tb, func(c *api.Config) { c.Orders = store })
	key := h.addKey(tb, "walker", order.Enterprise, order.Limits{PerMinute: 1 << 40, PerDay: 1 << 40})
	return &findHarness{harness: h, orders: orders, store: store, auth: []string{"Authorization", "Bearer " + key}}
}

// page is one answer of the find, decoded, with the headers the walk follows.
type page struct {
	status int
	body   genv2.OrderPage
	raw    []byte
	link   string
	etag   string
}

func (h *findHarness) find(tb testing.TB, pathAndQuery string, header ...string) page {
	tb.Helper()
	res, body := h.do(tb, "GET", pathAndQuery, append(slices.Clone(h.auth), header...)...)
	p := page{status: res.StatusCode, raw: body, link: res.Header.Get("Link"), etag: res.Header.Get("ETag")}
	if res.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, &p.body); err != nil {
			tb.Fatalf("%s: %v: %s", pathAndQuery, err, body)
		}
	}
	return p
}

var linkPattern = regexp.MustCompile(`^<([^>]+)>; rel="next"$`)

// walk reads every page of the query, following nextPageToken on even pages and the Link on
// odd ones, and checks on every page that the two name the same next page. each, when set,
// runs before every page.
func (h *findHarness) walk(tb testing.TB, query url.Values, each func()) []genv2.Order {
	tb.Helper()
	var got []genv2.Order
	next := "/v2/store/orders?" + query.Encode()
	for n := 0; ; n++ {
		if n > 5000 {
			tb.Fatal("the walk does not end")
		}
		if each != nil {
			each()
		}
		p := h.find(tb, next)
		if p.status != http.StatusOK {
			tb.Fatalf("GET %s: %d %s", next, p.status, p.raw)
		}
		if len(p.body.Orders) > max(1, atoi(query.Get("pageSize"), 100)) {
			tb.Fatalf("GET %s: %d orders, more than the page size", next, len(p.body.Orders))
		}
		got = append(got, p.body.Orders...)
		if p.body.NextPageToken == nil {
			if p.link != "" {
				tb.Fatalf("the last page has a Link: %s", p.link)
			}
			return got
		}
		m := linkPattern.FindStringSubmatch(p.link)
		if m == nil {
			tb.Fatalf("a page with a next page token has Link %q", p.link)
		}
		u, err := url.Parse(m[1])
		if err != nil {
			tb.Fatal(err)
		}
		linked := u.Query()
		if linked.Get("pageToken") != *p.body.NextPageToken || u.Path != "/v2/store/orders" {
			tb.Fatalf("Link %s does not name the nextPageToken %s", p.link, *p.body.NextPageToken)
		}
		linked.Del("pageToken")
		if !equalQueries(linked, query) {
			tb.Fatalf("Link %s does not repeat the query %s", p.link, query.Encode())
		}
		if n%2 == 0 {
			q := cloneValues(query)
			q.Set("pageToken", *p.body.NextPageToken)
			next = "/v2/store/orders?" + q.Encode()
		} else {
			next = m[1]
		}
	}
}

func equalQueries(a, b url.Values) bool {
	a, b = cloneValues(a), cloneValues(b)
	a.Del("pageToken")
	b.Del("pageToken")
	return a.Encode() == b.Encode()
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

func atoi(s string, def int) int {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		return def
	}
	return n
}

func toV2(orders []order.Order) []genv2.Order {
	out := make([]genv2.Order, 0, len(orders))
	for _, o := range orders {
		out = append(out, genv2.Order{Complete: o.Complete, Id: o.ID, PetId: o.PetID, Quantity: o.Quantity,
			ShipDate: o.ShipDate.UTC(), Status: genv2.OrderStatus(o.Status)})
	}
	return out
}

func equalOrders(a, b []genv2.Order) bool {
	return slices.EqualFunc(a, b, func(x, y genv2.Order) bool {
		return x.Id == y.Id && x.PetId == y.PetId && x.Quantity == y.Quantity && x.Complete == y.Complete &&
			x.Status == y.Status && x.ShipDate.Equal(y.ShipDate)
	})
}

// filterCase is one combination of filters, as a query and as the model's filter.
type filterCase struct {
	query  url.Values
	filter order.Filter
}

// filterCases are every combination of the four filters, with one or two values of each.
func filterCases() []filterCase {
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	from, before := day.Add(2*24*time.Hour), day.Add(5*24*time.Hour)
	pet := int64(3)
	statuses := [][]order.Status{nil, {order.StatusPending}, {order.StatusShipped, order.StatusCancelled}}
	var out []filterCase
	for _, st := range statuses {
		for _, withPet := range []bool{false, true} {
			for _, withFrom := range []bool{false, true} {
				for _, withBefore := range []bool{false, true} {
					c := filterCase{query: url.Values{}}
					for _, s := range st {
						c.query.Add("status", string(s))
						c.filter.Statuses = append(c.filter.Statuses, s)
					}
					if withPet {
						c.query.Set("petId", "3")
						c.filter.PetID = &pet
					}
					if withFrom {
						c.query.Set("shipDateFrom", from.Format(time.RFC3339))
						c.filter.ShipFrom = &from
					}
					if withBefore {
						// In another zone: the same instant.
						c.query.Set("shipDateBefore", before.In(time.FixedZone("", 2*3600)).Format(time.RFC3339))
						c.filter.ShipBefore = &before
					}
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// TestFindEveryFilterAgainstTheModel: every combination of filters, walked with pages of 1, 2,
// 7 and 1000 (and the default), gives exactly the model's orders, in id order.
func TestFindEveryFilterAgainstTheModel(t *testing.T) {
	h := newFindHarness(t, ordertest.Many(300))
	for _, c := range filterCases() {
		want := toV2(ordertest.Model(h.orders, c.filter))
		for _, size := range []string{"", "1", "2", "7", "1000"} {
			if size == "1" && len(want) > 120 {
				continue // the walk with pages of 2 already cuts these into many pages
			}
			q := cloneValues(c.query)
			if size != "" {
				q.Set("pageSize", size)
			}
			t.Run(q.Encode(), func(t *testing.T) {
				if got := h.walk(t, q, nil); !equalOrders(got, want) {
					t.Fatalf("got %d orders, want the model's %d", len(got), len(want))
				}
			})
		}
	}
}

// TestFindPagesAreCutByTheBudget: a filter that matches few of thousands of orders answers
// short pages with a next page token (the store examines a bounded number of entries per
// call), and the walk still finds exactly the model's orders.
func TestFindPagesAreCutByTheBudget(t *testing.T) {
	orders := ordertest.Many(2500)
	h := newFindHarness(t, orders)
	from := time.Date(2026, 1, 7, 0, 0, 0, 0, time.UTC)
	f := order.Filter{Statuses: []order.Status{order.StatusPending}, ShipFrom: &from}
	q := url.Values{"status": {"pending"}, "shipDateFrom": {"2026-01-07T00:00:00Z"}, "pageSize": {"1000"}}
	first := h.find(t, "/v2/store/orders?"+q.Encode())
	if first.status != 200 || first.body.NextPageToken == nil || len(first.body.Orders) >= 1000 {
		t.Fatalf("the first page: %d, %d orders, token %v; want a short page with a token", first.status, len(first.body.Orders), first.body.NextPageToken)
	}
	if got, want := h.walk(t, q, nil), toV2(ordertest.Model(orders, f)); !equalOrders(got, want) {
		t.Fatalf("got %d orders, want %d", len(got), len(want))
	}
}

// TestFindWalkWhileCancelling: while another goroutine cancels pending orders, a walk never
// repeats an order and never skips one: every order exists for the whole walk.
func TestFindWalkWhileCancelling(t *testing.T) {
	h := newFindHarness(t, ordertest.Many(300))
	ctx := context.Background()
	var pending []int64
	for _, o := range h.orders {
		if o.Status == order.StatusPending {
			pending = append(pending, o.ID)
		}
	}
	for _, size := range []string{"1", "7"} {
		var wg sync.WaitGroup
		tick := make(chan struct{})
		wg.Go(func() {
			for _, id := range pending {
				if _, ok := <-tick; !ok {
					return
				}
				if _, _, err := h.store.Cancel(ctx, id); err != nil {
					t.Error(err)
					return
				}
			}
			for range tick {
			}
		})
		got := h.walk(t, url.Values{"pageSize": {size}}, func() {
			select {
			case tick <- struct{}{}:
			default: // the canceller is busy: the page is read while it cancels
			}
		})
		close(tick)
		wg.Wait()
		ids := make([]int64, 0, len(got))
		for _, o := range got {
			ids = append(ids, o.Id)
		}
		want := make([]int64, 0, len(h.orders))
		for _, o := range ordertest.Model(h.orders, order.Filter{}) {
			want = append(want, o.ID)
		}
		if !slices.Equal(ids, want) {
			t.Fatalf("pageSize %s: the walk saw %d ids, want each of the %d once, in order", size, len(ids), len(want))
		}
	}
}

// TestFindStatusWalkWhileCancelling: a walk of the pending orders while they are cancelled
// sees each at most once, and every order that stayed pending for the whole walk.
func TestFindStatusWalkWhileCancelling(t *testing.T) {
	h := newFindHarness(t, ordertest.Many(300))
	ctx := context.Background()
	var pending []int64
	for _, o := range h.orders {
		if o.Status == order.StatusPending {
			pending = append(pending, o.ID)
		}
	}
	// Every other pending order, from the last: ones the walk has not reached yet, too.
	var victims []int64
	for i := len(pending) - 1; i >= 0; i -= 2 {
		victims = append(victims, pending[i])
	}
	n := 0
	got := h.walk(t, url.Values{"status": {"pending"}, "pageSize": {"2"}}, func() {
		if n < len(victims) {
			if _, _, err := h.store.Cancel(ctx, victims[n]); err != nil {
				t.Fatal(err)
			}
			n++
		}
	})
	seen := map[int64]bool{}
	for _, o := range got {
		if seen[o.Id] {
			t.Fatalf("order %d seen twice", o.Id)
		}
		seen[o.Id] = true
	}
	for _, id := range pending {
		if !slices.Contains(victims, id) && !seen[id] {
			t.Fatalf("order %d stayed pending for the whole walk and was skipped", id)
		}
	}
}

// otherVersionToken is a token of the layout pagetoken documents (format, after, filter
// digest, MAC under the secret), remade with another format byte under the harness's secret:
// what another version of the API, in the same deployment, would make.
func otherVersionToken(t *testing.T, genuine string) string {
	b, err := base64.RawURLEncoding.DecodeString(genuine)
	if err != nil || len(b) != 41 {
		t.Fatalf("token %q is not of pagetoken's layout", genuine)
	}
	b[0]++
	m := hmac.New(sha256.New, testSecret)
	m.Write(b[:25])
	copy(b[25:], m.Sum(nil)[:16])
	return base64.RawURLEncoding.EncodeToString(b)
}

// TestFindRefusesTokens: a token that is altered, cut, sent with other filters or made by
// another version is 400 invalid_request saying which; the genuine one works.
func TestFindRefusesTokens(t *testing.T) {
	h := newFindHarness(t, ordertest.Many(50))
	q := url.Values{"status": {"pending", "shipped"}, "pageSize": {"3"}}
	first := h.find(t, "/v2/store/orders?"+q.Encode())
	if first.body.NextPageToken == nil {
		t.Fatal("no next page token")
	}
	token := *first.body.NextPageToken
	flipped := []byte(token)
	flipped[20] ^= 'A' ^ 'B'
	if flipped[20] == token[20] || !strings.ContainsRune("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", rune(flipped[20])) {
		flipped[20] = 'A'
		if token[20] == 'A' {
			flipped[20] = 'B'
		}
	}
	for _, c := range []struct {
		name   string
		query  url.Values
		token  string
		reason string
	}{
		{"a flipped byte", q, string(flipped), "pageToken was altered"},
		{"truncated", q, token[:len(token)-1], "pageToken is malformed"},
		{"truncated by 4", q, token[:len(token)-4], "pageToken is malformed"},
		{"other statuses", url.Values{"status": {"pending"}, "pageSize": {"3"}}, token, "pageToken was made with other filters"},
		{"another pet", url.Values{"status": {"pending", "shipped"}, "petId": {"1"}}, token, "pageToken was made with other filters"},
		{"another version", q, otherVersionToken(t, token), "pageToken was made by another version of the API"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := cloneValues(c.query)
			v.Set("pageToken", c.token)
			res, body := h.do(t, "GET", "/v2/store/orders?"+v.Encode(), h.auth...)
			e := wantError(t, res, body, 400, gen.ErrorCodeInvalidRequest)
			// Every 400 names its parameter, why, and the document (openapi-v2.yaml's Errors).
			if !strings.HasPrefix(e.Message, c.reason) || !strings.HasSuffix(e.Message, "; see openapi-v2.yaml") {
				t.Fatalf("message %q, want %q …; see openapi-v2.yaml", e.Message, c.reason)
			}
		})
	}
	// The filters in another order and form are the same filters; the page size may change.
	same := url.Values{"status": {"shipped", "pending", "shipped"}, "pageSize": {"5"}, "pageToken": {token}}
	if p := h.find(t, "/v2/store/orders?"+same.Encode()); p.status != 200 {
		t.Fatalf("the genuine token with the same filters: %d %s", p.status, p.raw)
	}
}

// TestFindRefusesBadParameters: the page size's bounds, an unknown status, a date RFC 3339
// does not allow and a single-valued parameter sent twice are 400 invalid_request naming the
// parameter, the reason and v2's document; dates at the edges of the rule are accepted.
func TestFindRefusesBadParameters(t *testing.T) {
	h := newFindHarness(t, ordertest.Many(20))
	for _, q := range []string{"pageSize=1", "pageSize=1000", "shipDateFrom=2024-02-29T00:00:00Z",
		"shipDateFrom=2026-11-03T11:00:00%2B23:59", "shipDateBefore=2026-11-03T11:00:00-00:00",
		"shipDateFrom=2026-12-31T23:59:59.999999999Z", "status=pending&status=shipped"} {
		if p := h.find(t, "/v2/store/orders?"+q); p.status != 200 {
			t.Fatalf("%s: %d %s", q, p.status, p.raw)
		}
	}
	for _, c := range []struct{ query, names, reason string }{
		{"pageSize=0", "pageSize", "must be an integer from 1 to 1000"},
		{"pageSize=1001", "pageSize", "must be an integer from 1 to 1000"},
		{"pageSize=x", "pageSize", "must be an integer"},
		{"status=bogus", "status", "each value must be one of"},
		{"status=pending&status=bogus", "status", "each value must be one of"},
		{"shipDateFrom=2026-13-01T00:00:00Z", "shipDateFrom", "RFC 3339"},
		{"shipDateBefore=yesterday", "shipDateBefore", "RFC 3339"},
		{"shipDateFrom=2026-12-31T23:59:60Z", "shipDateFrom", "second 60 (a leap second) is not accepted"},
		{"shipDateBefore=2026-02-30T00:00:00Z", "shipDateBefore", "February 2026 has no day 30"},
		{"shipDateFrom=2026-11-03T11:00:00%2B99:00", "shipDateFrom", "offset +99:00 is out of range"},
		{"shipDateFrom=2026-11-03T11:00:00%2B24:00", "shipDateFrom", "offset +24:00 is out of range"},
		{"shipDateBefore=2026-11-03T11:00:00-23:60", "shipDateBefore", "offset -23:60 is out of range"},
		{"petId=-1", "petId", "must be an integer from 0"},
		{"pageToken=not*base64", "pageToken", "must match the pattern"},
		{"pageToken=", "pageToken", "must be a string of 1 to 256 characters"},
		{"pageSize=1&pageSize=2", "pageSize", "given 2 times; send it once"},
		{"pageSize=5&pageSize=5&pageSize=5", "pageSize", "given 3 times; send it once"},
		{"pageToken=abc&pageToken=def", "pageToken", "given 2 times; send it once"},
		{"petId=1&petId=1", "petId", "given 2 times; send it once"},
		{"shipDateFrom=2026-11-03T11:00:00Z&shipDateFrom=2026-11-03T11:00:00Z", "shipDateFrom", "given 2 times; send it once"},
		{"shipDateBefore=2026-11-03T11:00:00Z&shipDateBefore=2026-11-04T11:00:00Z", "shipDateBefore", "given 2 times; send it once"},
	} {
		res, body := h.do(t, "GET", "/v2/store/orders?"+c.query, h.auth...)
		e := wantError(t, res, body, 400, gen.ErrorCodeInvalidRequest)
		if want := "query parameter " + c.names + ": "; !strings.HasPrefix(e.Message, want) || !strings.Contains(e.Message, c.reason) ||
			!strings.HasSuffix(e.Message, "; see openapi-v2.yaml") {
			t.Errorf("%s: message %q, want %q…%q…; see openapi-v2.yaml", c.query, e.Message, want, c.reason)
		}
	}
}

// TestRefusalsNameTheirDocument: a parameter refused under /v1 names openapi.yaml, under /v2
// openapi-v2.yaml: the document the client generated from.
func TestRefusalsNameTheirDocument(t *testing.T) {
	h := newHarness(t)
	for path, doc := range map[string]string{"/v1/store/orders/x": "openapi.yaml", "/v2/store/orders/x": "openapi-v2.yaml"} {
		res, body := h.authed(t, "DELETE", path)
		e := wantError(t, res, body, 400, gen.ErrorCodeInvalidRequest)
		if !strings.HasPrefix(e.Message, "path parameter orderId: ") || !strings.HasSuffix(e.Message, "; see "+doc) {
			t.Errorf("DELETE %s: message %q, want it to name orderId and %s", path, e.Message, doc)
		}
	}
}

// TestFindEmptyRange: a ship-date range that holds no instant (from at or after before) is
// one empty page with no next page, however many orders the store holds, rather than a walk
// of every id in empty pages.
func TestFindEmptyRange(t *testing.T) {
	h := newFindHarness(t, ordertest.Many(2500)) // more than one call's budget
	for _, q := range []string{
		"shipDateFrom=2026-01-05T00:00:00Z&shipDateBefore=2026-01-05T00:00:00Z",
		"shipDateFrom=2026-01-05T01:00:00%2B01:00&shipDateBefore=2026-01-05T00:00:00Z", // the same instant
		"shipDateFrom=2026-01-06T00:00:00Z&shipDateBefore=2026-01-05T00:00:00Z&pageSize=1",
		"status=pending&petId=3&shipDateFrom=2027-01-01T00:00:00Z&shipDateBefore=2026-01-01T00:00:00Z",
	} {
		p := h.find(t, "/v2/store/orders?"+q)
		if p.status != 200 || len(p.body.Orders) != 0 || p.body.NextPageToken != nil || p.link != "" {
			t.Fatalf("%s: %d, %d orders, token %v, Link %q; want one empty last page", q, p.status, len(p.body.Orders), p.body.NextPageToken, p.link)
		}
		if again := h.find(t, "/v2/store/orders?"+q, "If-None-Match", p.etag); again.status != http.StatusNotModified {
			t.Fatalf("%s with its ETag: %d, want 304", q, again.status)
		}
	}
}

// TestFindETagPerPage: each page's ETag in If-None-Match answers 304 with the tag, until a
// cancel changes that page.
func TestFindETagPerPage(t *testing.T) {
	h := newFindHarness(t, ordertest.Many(20))
	first := h.find(t, "/v2/store/orders?pageSize=5")
	second := h.find(t, "/v2/store/orders?pageSize=5&pageToken="+*first.body.NextPageToken)
	if first.etag == "" || first.etag == second.etag {
		t.Fatalf("ETags %q and %q: want one per page", first.etag, second.etag)
	}
	for _, p := range []struct {
		query string
		was   page
	}{{"pageSize=5", first}, {"pageSize=5&pageToken=" + *first.body.NextPageToken, second}} {
		again := h.find(t, "/v2/store/orders?"+p.query, "If-None-Match", p.was.etag)
		if again.status != http.StatusNotModified || again.etag != p.was.etag || len(again.raw) != 0 {
			t.Fatalf("%s with its ETag: %d %q", p.query, again.status, again.etag)
		}
	}
	// Cancel a pending order of the second page: its tag no longer matches; the first's does.
	var victim int64 = -1
	for _, o := range second.body.Orders {
		if o.Status == genv2.OrderStatusPending {
			victim = o.Id
			break
		}
	}
	if victim < 0 {
		t.Fatal("no pending order on the second page")
	}
	if res, body := h.do(t, "DELETE", fmt.Sprintf("/v2/store/orders/%d", victim), h.auth...); res.StatusCode != 204 {
		t.Fatalf("cancel: %d %s", res.StatusCode, body)
	}
	if p := h.find(t, "/v2/store/orders?pageSize=5&pageToken="+*first.body.NextPageToken, "If-None-Match", second.etag); p.status != 200 || p.etag == second.etag {
		t.Fatalf("the changed page: %d %q, want 200 with a new tag", p.status, p.etag)
	}
	if p := h.find(t, "/v2/store/orders?pageSize=5", "If-None-Match", first.etag); p.status != 304 {
		t.Fatalf("the unchanged page: %d, want 304", p.status)
	}
}

// TestFindLastPage: a page that reaches the end has no token and no Link.
func TestFindLastPage(t *testing.T) {
	h := newFindHarness(t, ordertest.Many(4))
	p := h.find(t, "/v2/store/orders?pageSize=4")
	if p.status != 200 || len(p.body.Orders) != 4 || p.body.NextPageToken != nil || p.link != "" {
		t.Fatalf("got %d, %d orders, token %v, Link %q; want the 4 orders and no next page", p.status, len(p.body.Orders), p.body.NextPageToken, p.link)
	}
	if strings.Contains(string(p.raw), "nextPageToken") {
		t.Fatalf("the last page names nextPageToken: %s", p.raw)
	}
}

// TestV2Orders: reading and cancelling one order under /v2, and the routes' rules.
func TestV2Orders(t *testing.T) {
	h := newHarness(t)
	key := []string{"Authorization", "Bearer " + h.key}
	res, body := h.do(t, "GET", "/v2/store/orders/1", key...)
	var o genv2.Order
	if res.StatusCode != 200 || json.Unmarshal(body, &o) != nil || o.Id != 1 {
		t.Fatalf("GET order 1: %d %s", res.StatusCode, body)
	}
	if res, _ := h.do(t, "HEAD", "/v2/store/orders/1", key...); res.StatusCode != 200 || res.Header.Get("X-RateLimit-Limit") == "" {
		t.Fatalf("HEAD order 1: %d", res.StatusCode)
	}
	if res, _ := h.do(t, "HEAD", "/v2/store/orders", key...); res.StatusCode != 200 || res.Header.Get("ETag") == "" || res.Header.Get("Content-Length") == "" {
		t.Fatalf("HEAD the find: %d %v", res.StatusCode, res.Header)
	}
	res, body = h.do(t, "GET", "/v2/store/orders/424242", key...)
	wantError(t, res, body, 404, gen.ErrorCodeOrderNotFound)

	for _, c := range []struct {
		id     string
		status int
		code   gen.ErrorCode
	}{{"1", 204, ""}, {"1", 204, ""}, {"424242", 404, gen.ErrorCodeOrderNotFound}} {
		res, body := h.do(t, "DELETE", "/v2/store/orders/"+c.id, key...)
		if c.status == 204 {
			if res.StatusCode != 204 {
				t.Fatalf("DELETE %s: %d %s", c.id, res.StatusCode, body)
			}
			continue
		}
		wantError(t, res, body, c.status, c.code)
	}
	var shipped int64 = -1
	for _, o := range ordertest.Fixture() {
		if o.Status == order.StatusShipped {
			shipped = o.ID
		}
	}
	res, body = h.do(t, "DELETE", fmt.Sprintf("/v2/store/orders/%d", shipped), key...)
	wantError(t, res, body, 409, gen.ErrorCodeOrderAlreadyShipped)

	res, body = h.do(t, "GET", "/v2/store/orders")
	wantError(t, res, body, 401, gen.ErrorCodeUnauthorized)
	if res.Header.Get("WWW-Authenticate") == "" {
		t.Fatal("401 without WWW-Authenticate")
	}
	res, body = h.do(t, "DELETE", "/v2/store/orders", key...)
	wantError(t, res, body, 405, gen.ErrorCodeMethodNotAllowed)
	if allow := res.Header.Get("Allow"); allow != "GET, HEAD" {
		t.Fatalf("Allow %q, want GET, HEAD", allow)
	}
	res, body = h.do(t, "GET", "/v2/unknown", key...)
	wantError(t, res, body, 404, gen.ErrorCodeNotFound)

	res, body = h.do(t, "GET", "/v2/openapi.yaml")
	if res.StatusCode != 200 || !strings.Contains(string(body), "version: 2.1.0") || res.Header.Get("X-RateLimit-Limit") != "" {
		t.Fatalf("GET /v2/openapi.yaml: %d %v", res.StatusCode, res.Header)
	}
}

// TestV1AndV2ShareOneQuota: a key's requests to /v1 and /v2 count in the same windows.
func TestV1AndV2ShareOneQuota(t *testing.T) {
	h := newHarness(t)
	key := []string{"Authorization", "Bearer " + h.addKey(t, "shared", order.Enterprise, order.Limits{PerMinute: 10, PerDay: 100})}
	for i := 1; i <= 10; i++ {
		path := "/v1/store/orders"
		if i%2 == 0 {
			path = "/v2/store/orders"
		}
		res, body := h.do(t, "GET", path, key...)
		if res.StatusCode != 200 {
			t.Fatalf("request %d: %d %s", i, res.StatusCode, body)
		}
		if got, want := res.Header.Get("X-RateLimit-Remaining"), fmt.Sprint(10-i); got != want {
			t.Fatalf("request %d to %s: remaining %s, want %s", i, path, got, want)
		}
	}
	for _, path := range []string{"/v1/store/orders", "/v2/store/orders"} {
		res, body := h.do(t, "GET", path, key...)
		wantError(t, res, body, 429, gen.ErrorCodeRateLimitExceeded)
	}
}

// TestCachedPageFollowsANewSecret: a page answered again at the same version of the orders
// (from the page cache) names a next page the service still accepts after the deployment's
// secret was made anew: the cache does not hand out a token of the old secret.
func TestCachedPageFollowsANewSecret(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "orderd.db")
	db, err := sqlitestore.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Import(ctx, ordertest.Many(20), nil); err != nil {
		t.Fatal(err)
	}
	store, codec := sqlitestore.NewOrders(db), pagetoken.FromStore(sqlitestore.NewSecrets(db))
	h := &findHarness{harness: newHarness(t, func(c *api.Config) { c.Orders, c.PageTokens = store, codec })}
	h.auth = []string{"Authorization", "Bearer " + h.addKey(t, "walker", order.Enterprise, order.Limits{PerMinute: 1 << 40, PerDay: 1 << 40})}
	first := h.find(t, "/v2/store/orders?pageSize=5")
	if first.status != 200 || first.body.NextPageToken == nil {
		t.Fatalf("first page: %d %s", first.status, first.raw)
	}

	sqlitetest.DeleteSecret(t, path)
	fresh, err := pagetoken.FromStore(sqlitestore.NewSecrets(db)).Make(ctx, order.Filter{}, 5)
	if err != nil {
		t.Fatal(err)
	}
	pagetokentest.AwaitNewSecret(t, codec, fresh, order.Filter{}, 5)

	again := h.find(t, "/v2/store/orders?pageSize=5")
	if again.status != 200 || again.body.NextPageToken == nil || *again.body.NextPageToken == *first.body.NextPageToken {
		t.Fatalf("the first page again: %d, token %v (was %v): want a token of the new secret", again.status, again.body.NextPageToken, *first.body.NextPageToken)
	}
	if next := h.find(t, "/v2/store/orders?pageSize=5&pageToken="+*again.body.NextPageToken); next.status != 200 {
		t.Fatalf("its next page: %d %s", next.status, next.raw)
	}
}

// TestShipDateBoundsFinerThanANanosecond: the contract takes any number of fraction digits;
// Go's parse keeps nine. An instant a tenth of a nanosecond after the orders shipped at
// 2026-01-01T00:00:00Z is after them, as shipDateFrom (at or after: none of them) and as
// shipDateBefore (before: all of them); zeros past the ninth digit change nothing.
func TestShipDateBoundsFinerThanANanosecond(t *testing.T) {
	h := newFindHarness(t, ordertest.Many(10)) // ids 0 and 21 ship at 2026-01-01T00:00:00Z
	ids := func(query string) []int64 {
		t.Helper()
		p := h.find(t, "/v2/store/orders?"+query)
		if p.status != 200 {
			t.Fatalf("%s: %d %s", query, p.status, p.raw)
		}
		var out []int64
		for _, o := range p.body.Orders {
			out = append(out, o.Id)
		}
		return out
	}
	for query, want := range map[string][]int64{
		"shipDateBefore=2026-01-01T00:00:00.0000000001Z":        {0, 21},
		"shipDateBefore=2026-01-01T00:00:00.00000000000Z":       nil,
		"shipDateBefore=2026-01-01T01:00:00.0000000001%2B01:00": {0, 21},
	} {
		if got := ids(query); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", query, got, want)
		}
	}
	for _, query := range []string{"shipDateFrom=2026-01-01T00:00:00.0000000001Z", "shipDateFrom=2026-01-01T00:00:00.00000000000Z"} {
		got := ids(query)
		shippedFirst := slices.Contains(got, 0) || slices.Contains(got, 21)
		if finer := strings.HasSuffix(query, "1Z"); shippedFirst == finer {
			t.Errorf("%s: %v; the orders shipped at 00:00:00Z in it: %v, want %v", query, got, shippedFirst, !finer)
		}
	}
}
