package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/petstore/orderd"
	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/order"
)

// ErrFailed means that some answers broke the contract; the report says which.
var ErrFailed = errors.New("contract-check: some answers break the contract")

// ErrNoAnswer means no request got an answer; the error wrapping it says what the last met.
var ErrNoAnswer = errors.New("contract-check: nothing answered")

// Config is what a check needs.
type Config struct {
	// Base is where the instance serves its versions, http://127.0.0.1:8080: both are
	// checked. Ending in /v1 or /v2, it names the one version to check.
	Base string
	// Key is an API key of the instance (any plan); the checks spend about twenty-five requests.
	Key string
	// Timeout bounds each request; 10s when zero.
	Timeout time.Duration
}

// Checker checks one instance; each Run keeps its tally in a copy.
type Checker struct {
	targets []target
	key     string
	client  *http.Client

	server  string           // of the version being checked
	checker *apitest.Checker // of the version being checked

	ctx                      context.Context
	out                      io.Writer
	passed, failed, answered int   // answered: requests that got an answer, right or wrong
	lastErr                  error // what the last request that got no answer met
}

// target is one version of the API where the instance serves it, and its checks.
type target struct {
	server  string
	checker *apitest.Checker
	run     func(*Checker)
}

// New returns a Checker of the instance at cfg.Base, an http or https URL with a host.
func New(cfg Config) (*Checker, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if u, err := url.Parse(cfg.Base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("want an http or https URL such as http://127.0.0.1:8080, not %q", cfg.Base)
	}
	root := strings.TrimSuffix(cfg.Base, "/")
	runs := []func(*Checker){(*Checker).checkV1, (*Checker).checkV2}
	c := &Checker{key: cfg.Key, client: &http.Client{Timeout: cfg.Timeout}} // asks for gzip, decompresses
	for i, v := range orderd.Versions {
		only := strings.HasSuffix(root, v.Base)
		if !only && slices.ContainsFunc(orderd.Versions, func(o orderd.Version) bool { return strings.HasSuffix(root, o.Base) }) {
			continue // the base names another version
		}
		server := strings.TrimSuffix(root, v.Base) + v.Base
		checker, err := apitest.NewVersion(v, server)
		if err != nil {
			return nil, err
		}
		c.targets = append(c.targets, target{server, checker, runs[i]})
	}
	return c, nil
}

// check is one request and the statuses right for it.
type check struct {
	name, method, path string
	authed             bool
	header             http.Header
	want               []int
}

// Run writes one line per check to out, version 1's first, then "N passed, M failed"; its
// error wraps ErrNoAnswer or ErrFailed.
func (ch *Checker) Run(ctx context.Context, out io.Writer) error {
	c := *ch
	c.ctx, c.out = ctx, out
	for _, t := range c.targets {
		c.server, c.checker = t.server, t.checker
		t.run(&c)
	}
	fmt.Fprintf(out, "%d passed, %d failed\n", c.passed, c.failed)
	if c.answered == 0 {
		var servers []string
		for _, t := range c.targets {
			servers = append(servers, t.server)
		}
		return fmt.Errorf("%w at %s: %w", ErrNoAnswer, strings.Join(servers, " or "), c.lastErr)
	}
	if c.failed > 0 {
		return ErrFailed
	}
	return nil
}

// checkV1 checks the operations of version 1.
func (c *Checker) checkV1() {
	res, body := c.do(check{"list orders", "GET", "/store/orders", true, nil, []int{200}})
	// An id is used only if the list shows it unused: a guessed one could be cancelled.
	var id string
	noID := "not run: the list did not answer 200, so no id is known to be unused"
	if res != nil && res.StatusCode == 200 {
		if unused, err := unusedID(body); err != nil {
			noID = fmt.Sprintf("not run: the list's body is not a list of orders (%v), so no id is known to be unused", err)
		} else {
			id = strconv.FormatInt(unused, 10)
		}
		c.do(check{"list orders again, If-None-Match", "GET", "/store/orders", true,
			http.Header{"If-None-Match": {res.Header.Get("ETag")}}, []int{304}})
	}
	unknownKey := newUnknownKey()
	for _, ch := range []check{
		{"cancel an order that does not exist", "DELETE", "/store/orders/{id}", true, nil, []int{404}},
		{"cancel with an id that is not an int64", "DELETE", "/store/orders/9223372036854775808", true, nil, []int{400}},
		{"cancel with an id that is not a number", "DELETE", "/store/orders/abc", true, nil, []int{400}},
		{"list without a key", "GET", "/store/orders", false, nil, []int{401}},
		{"cancel without a key and with a bad id", "DELETE", "/store/orders/abc", false, nil, []int{401}},
		{"list with an unknown key", "GET", "/store/orders", false, http.Header{"Authorization": {"Bearer " + unknownKey}}, []int{401}},
		{"deprecated pet that does not exist", "GET", "/pets/{id}", true, nil, []int{404, 410}},
		{"an unknown route", "GET", "/no/such/route", true, nil, []int{404}},
		{"a method the list does not have", "PUT", "/store/orders", true, nil, []int{405}},
		{"the contract itself", "GET", "/openapi.yaml", false, nil, []int{200}},
	} {
		if path, named := strings.CutSuffix(ch.path, "{id}"); named {
			if id == "" {
				c.fail(ch, "%s", noID)
				continue
			}
			ch.path = path + id
		}
		c.do(ch)
	}
}

// newUnknownKey is a key made now, which no instance knows (crypto/rand does not fail).
func newUnknownKey() string {
	key, _, _ := order.NewKey("", order.Free, order.Limits{}, time.Now())
	return key
}

func (c *Checker) line(ch check) string {
	return fmt.Sprintf("%s: %s %s", ch.name, ch.method, strings.TrimPrefix(c.server, "http://")+ch.path)
}

func (c *Checker) fail(ch check, format string, a ...any) {
	c.failed++
	fmt.Fprintf(c.out, "FAIL %s: %s\n", c.line(ch), fmt.Sprintf(format, a...))
}

func (c *Checker) do(ch check) (*http.Response, []byte) {
	req, err := http.NewRequestWithContext(c.ctx, ch.method, c.server+ch.path, nil)
	if err != nil {
		c.fail(ch, "%v", err)
		return nil, nil
	}
	maps.Copy(req.Header, ch.header)
	if ch.authed {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	res, err := c.client.Do(req)
	if err != nil {
		c.lastErr = err
		c.fail(ch, "%v", err)
		return nil, nil
	}
	c.answered++
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		c.fail(ch, "reading the body: %v", err)
		return nil, nil
	}
	if err := c.checker.Check(req, res, body); err != nil {
		c.fail(ch, "%d breaks the contract: %s", res.StatusCode, strings.ReplaceAll(err.Error(), "\n", "; "))
	} else if !slices.Contains(ch.want, res.StatusCode) {
		c.fail(ch, "%d, want %v", res.StatusCode, ch.want)
	} else {
		c.passed++
		fmt.Fprintf(c.out, "ok   %s → %d\n", c.line(ch), res.StatusCode)
	}
	return res, body
}

// unusedID is the largest int64 no listed order has; an error if list is no array of orders.
func unusedID(list []byte) (int64, error) {
	var orders []struct {
		ID json.Number `json:"id"`
	}
	dec := json.NewDecoder(bytes.NewReader(list))
	dec.UseNumber()
	if err := dec.Decode(&orders); err != nil {
		return 0, err
	}
	if orders == nil { // null, which says nothing about which ids are used
		return 0, errors.New("null, not an array")
	}
	used := map[string]bool{}
	for _, o := range orders {
		used[o.ID.String()] = true
	}
	for id := int64(math.MaxInt64); ; id-- {
		if !used[strconv.FormatInt(id, 10)] {
			return id, nil
		}
	}
}
