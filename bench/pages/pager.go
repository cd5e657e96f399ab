package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/petstore/orderd/internal/order"
)

// query is one filter of the bench, as the store reads it and as a client sends it.
type query struct {
	name   string
	filter order.Filter
	params url.Values
}

// sparseDay is the one ship date the sparse query keeps: 1 order in shipDays.
var sparseDay = firstShipDate.Add(shipDays / 2 * 24 * time.Hour)

// The two queries. dense keeps 89% of the orders, from the pending state's index in both
// stores. sparse keeps 1 order in 1000, evenly spread, by a ship-date range: neither store
// has an index in id order for it (see each store's find.go), so both walk every id within
// the budget and a page of 100 examines about 1000 ids to find one match. It is the worst
// case for bounded work: the most index entries examined per order returned.
var (
	dense = query{
		name:   "dense: status=pending (89% match)",
		filter: order.Filter{Statuses: []order.Status{order.StatusPending}},
		params: url.Values{"status": {"pending"}},
	}
	sparse = query{
		name:   "sparse: one ship date (0.1% match)",
		filter: order.Filter{ShipFrom: ptr(sparseDay), ShipBefore: ptr(sparseDay.Add(24 * time.Hour))},
		params: url.Values{"shipDateFrom": {sparseDay.Format(time.RFC3339)},
			"shipDateBefore": {sparseDay.Add(24 * time.Hour).Format(time.RFC3339)}},
	}
)

func ptr[T any](v T) *T { return &v }

// pager reads one page of q after the page named by token ("" for the first) and returns
// how many orders it held and the token of the next page, "" at the end.
type pager interface {
	page(ctx context.Context, q query, size int, token string) (orders int, next string, err error)
}

// storePager reads pages from a store's Finder directly, without HTTP: its token is the
// page's Resume in decimal.
type storePager struct{ finder order.Finder }

func (p storePager) page(ctx context.Context, q query, size int, token string) (int, string, error) {
	req := order.PageRequest{Size: size}
	if token != "" {
		after, err := strconv.ParseInt(token, 10, 64)
		if err != nil {
			return 0, "", err
		}
		req.After = &after
	}
	pg, err := p.finder.Find(ctx, q.filter, req)
	if err != nil {
		return 0, "", err
	}
	if pg.End {
		return len(pg.Orders), "", nil
	}
	return len(pg.Orders), strconv.FormatInt(pg.Resume, 10), nil
}

// httpPager reads pages as a client of v2 does: GET /v2/store/orders with the filters and
// the previous page's nextPageToken.
type httpPager struct {
	client *http.Client
	base   string // the service's URL
	key    string
}

// requests numbers the pages httpPager asks for.
var requests atomic.Uint64

func (p httpPager) page(ctx context.Context, q query, size int, token string) (int, string, error) {
	params := url.Values{}
	for k, v := range q.params {
		params[k] = v
	}
	params.Set("pageSize", strconv.Itoa(size))
	// The service answers a page asked for again at the same version from its page cache;
	// a parameter the find ignores makes every request a query of its own, so that every page
	// measures the store's work.
	params.Set("request", strconv.FormatUint(requests.Add(1), 10))
	if token != "" {
		params.Set("pageToken", token)
	}
	req, err := http.NewRequestWithContext(ctx, "GET", p.base+"/v2/store/orders?"+params.Encode(), nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+p.key)
	res, err := p.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		return 0, "", fmt.Errorf("GET /v2/store/orders: %s: %s", res.Status, b)
	}
	var body struct {
		Orders        []json.RawMessage `json:"orders"`
		NextPageToken string            `json:"nextPageToken"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		return 0, "", fmt.Errorf("GET /v2/store/orders: %w", err)
	}
	return len(body.Orders), body.NextPageToken, nil
}
