package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"time"
)

// netHTTPClient sends through net/http's Transport, MaxIdleConnsPerHost set to the number of
// connections so that each worker finds a kept-alive one. It is here to compare with
// rawClient: what net/http's own work adds to the figures at these rates.
type netHTTPClient struct {
	hc      *http.Client
	method  string
	url     string
	headers http.Header
	timeout time.Duration
}

var _ client = (*netHTTPClient)(nil)

func newNetHTTP(method, url string, hdrs []string, conns int, timeout time.Duration) *netHTTPClient {
	h := http.Header{}
	for _, kv := range hdrs {
		name, value, _ := strings.Cut(kv, ":")
		h.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	t := &http.Transport{
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		DisableCompression:  true,
	}
	return &netHTTPClient{hc: &http.Client{Transport: t}, method: method, url: url, headers: h, timeout: timeout}
}

func (c *netHTTPClient) do() (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, c.method, c.url, nil)
	if err != nil {
		return 0, err
	}
	req.Header = c.headers
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, err
}
