package e2e

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"testing"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/redistest"
	"github.com/petstore/orderd/internal/service/servicetest"
)

// page is an answer of GET /v2/store/orders, as the test reads it.
type page struct {
	Orders []struct {
		ID     int64        `json:"id"`
		Status order.Status `json:"status"`
	} `json:"orders"`
	NextPageToken string `json:"nextPageToken"`
}

// TestPagesWalkAcrossInstances: a walk through every page of a find on a Redis deployment,
// each page asked of the other instance than the one before, reads every order exactly once:
// every instance accepts the tokens of every other (the secret is Redis's), and a cancel made
// through one instance mid-walk is seen by the other's next page.
func TestPagesWalkAcrossInstances(t *testing.T) {
	d := newDeployment(t, redistest.Start(t), nil)
	orders := ordertest.Many(300)
	if _, err := servicetest.Import(context.Background(), d.admin, orders, nil); err != nil {
		t.Fatal(err)
	}
	instances := []*instance{d.instance(t, "fail"), d.instance(t, "fail")}
	key := d.key(t, "walker", order.Business)

	// Every order the deployment holds: the fixture newDeployment imported, and these.
	all := append(ordertest.Fixture(), orders...)
	want := map[int64]bool{}
	for _, o := range all {
		want[o.ID] = true
	}
	seen := map[int64]bool{}
	token, cancelled := "", false
	for n := 0; ; n++ {
		q := url.Values{"pageSize": {"7"}}
		if token != "" {
			q.Set("pageToken", token)
		}
		res, body := instances[n%2].do(t, "GET", "/v2/store/orders?"+q.Encode(), key)
		if res.StatusCode != 200 {
			t.Fatalf("page %d on instance %d: %d %s", n, n%2, res.StatusCode, body)
		}
		var p page
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatal(err)
		}
		for _, o := range p.Orders {
			if seen[o.ID] {
				t.Fatalf("page %d: order %d a second time", n, o.ID)
			}
			seen[o.ID] = true
			// Order 600 (pending in ordertest.Many) is cancelled through one instance before
			// the walk reaches it; the other instance must then page it as cancelled.
			if o.ID == 600 && o.Status != order.StatusCancelled {
				t.Fatalf("page %d on instance %d: order 600 is %s after its cancel", n, n%2, o.Status)
			}
		}
		if !cancelled && len(p.Orders) > 0 && p.Orders[len(p.Orders)-1].ID >= 300 {
			res, body := instances[(n+1)%2].do(t, "DELETE", "/v2/store/orders/"+strconv.Itoa(600), key)
			if res.StatusCode != 204 {
				t.Fatalf("cancel of order 600: %d %s", res.StatusCode, body)
			}
			cancelled = true
		}
		if p.NextPageToken == "" {
			break
		}
		token = p.NextPageToken
		if n > 1000 {
			t.Fatal("the walk does not end")
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("the walk read %d orders, the deployment holds %d", len(seen), len(want))
	}
	for id := range want {
		if !seen[id] {
			t.Fatalf("the walk skipped order %d", id)
		}
	}
}
