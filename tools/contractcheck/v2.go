package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
)

// checkV2 checks the operations of version 2. Reading one order uses an id the first page
// shows, and following a page its token: each runs only when there is one to use.
func (c *Checker) checkV2() {
	res, body := c.do(check{"find orders, a page of 2", "GET", "/store/orders?pageSize=2", true, nil, []int{200}})
	var page struct {
		Orders []struct {
			ID json.Number `json:"id"`
		} `json:"orders"`
		NextPageToken string `json:"nextPageToken"`
	}
	if res != nil && res.StatusCode == 200 && json.Unmarshal(body, &page) == nil {
		c.do(check{"find orders again, If-None-Match", "GET", "/store/orders?pageSize=2", true,
			http.Header{"If-None-Match": {res.Header.Get("ETag")}}, []int{304}})
		if page.NextPageToken != "" {
			c.do(check{"the next page", "GET", "/store/orders?pageSize=2&pageToken=" + url.QueryEscape(page.NextPageToken), true, nil, []int{200}})
		}
		if len(page.Orders) > 0 {
			if _, err := strconv.ParseInt(page.Orders[0].ID.String(), 10, 64); err == nil {
				c.do(check{"read an order the page shows", "GET", "/store/orders/" + page.Orders[0].ID.String(), true, nil, []int{200}})
			}
		}
	}
	for _, ch := range []check{
		{"find with a page token no instance made", "GET", "/store/orders?pageToken=AAAA", true, nil, []int{400}},
		{"find with a status that does not exist", "GET", "/store/orders?status=lost", true, nil, []int{400}},
		{"read with an id that is not a number", "GET", "/store/orders/abc", true, nil, []int{400}},
		{"cancel with an id that is not a number", "DELETE", "/store/orders/abc", true, nil, []int{400}},
		{"find without a key", "GET", "/store/orders", false, nil, []int{401}},
		{"find with an unknown key", "GET", "/store/orders", false, http.Header{"Authorization": {"Bearer " + newUnknownKey()}}, []int{401}},
		{"the log of events, a page of 1", "GET", "/store/events?pageSize=1", true, nil, []int{200}},
		{"an unknown route", "GET", "/no/such/route", true, nil, []int{404}},
		{"a method the list does not have", "PUT", "/store/orders", true, nil, []int{405}},
		{"the contract itself", "GET", "/openapi.yaml", false, nil, []int{200}},
	} {
		c.do(ch)
	}
}
