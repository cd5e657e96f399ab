package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/petstore/orderd/internal/contract"
)

// errChecksFailed makes the exit status 1 after the report is printed.
var errChecksFailed = errors.New("contract-check: some answers break the contract")

// contractCheck runs `orderd contract-check`: it calls every operation of a running instance
// in ways that change nothing and validates each answer (status, headers, body) against the
// embedded openapi.yaml. One line per check, then "N passed, M failed".
func contractCheck(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("contract-check", flag.ContinueOnError)
	base := fs.String("base", "", "where the instance serves its /v1 paths, e.g. http://127.0.0.1:8080 or https://api.example/v1")
	key := fs.String("key", "", "an API key of the instance (any plan); the checks use about ten requests of its quota")
	timeout := fs.Duration("timeout", 10*time.Second, "bound on each request")
	fs.Usage = flagUsage(fs, "orderd contract-check --base URL --key KEY")
	rest, err := parseFlags(fs, args, getenv, stdout)
	if err != nil {
		return err
	}
	if len(rest) > 0 || *base == "" || *key == "" {
		return usageErrorf("contract-check: --base and --key are required")
	}
	server := strings.TrimSuffix(strings.TrimSuffix(*base, "/"), "/v1") + "/v1"
	checker, err := contract.New(server)
	if err != nil {
		return usageErrorf("contract-check: --base: %w", err)
	}
	c := &checkRun{ctx: ctx, server: server, key: *key, checker: checker, out: stdout,
		client: &http.Client{Timeout: *timeout, Transport: &http.Transport{DisableCompression: true}}}
	c.run()
	fmt.Fprintf(stdout, "%d passed, %d failed\n", c.passed, c.failed)
	if c.failed > 0 {
		return errChecksFailed
	}
	return nil
}

type checkRun struct {
	ctx            context.Context
	server, key    string
	checker        *contract.Checker
	client         *http.Client
	out            io.Writer
	passed, failed int
}

// check is one request and the statuses that would be right for it.
type check struct {
	name, method, path string
	authed             bool
	header             http.Header
	want               []int
}

func (c *checkRun) run() {
	res, body := c.do(check{"list orders", "GET", "/store/orders", true, nil, []int{200}})
	unused := int64(math.MaxInt64)
	if res != nil && res.StatusCode == 200 {
		unused = unusedID(body)
		c.do(check{"list orders again, If-None-Match", "GET", "/store/orders", true,
			http.Header{"If-None-Match": {res.Header.Get("ETag")}}, []int{304}})
	}
	id := strconv.FormatInt(unused, 10)
	for _, ch := range []check{
		{"cancel an order that does not exist", "DELETE", "/store/orders/" + id, true, nil, []int{404}},
		{"cancel with an id that is not an int64", "DELETE", "/store/orders/9223372036854775808", true, nil, []int{400}},
		{"cancel with an id that is not a number", "DELETE", "/store/orders/abc", true, nil, []int{400}},
		{"list without a key", "GET", "/store/orders", false, nil, []int{401}},
		{"cancel without a key and with a bad id", "DELETE", "/store/orders/abc", false, nil, []int{401}},
		{"list with an unknown key", "GET", "/store/orders", false, http.Header{"Authorization": {"Bearer osk_contract-check-unknown"}}, []int{401}},
		{"deprecated pet that does not exist", "GET", "/pets/" + id, true, nil, []int{404, 410}},
		{"an unknown route", "GET", "/no/such/route", true, nil, []int{404}},
		{"a method the list does not have", "PUT", "/store/orders", true, nil, []int{405}},
		{"the contract itself", "GET", "/openapi.yaml", false, nil, []int{200}},
	} {
		c.do(ch)
	}
}

func (c *checkRun) do(ch check) (*http.Response, []byte) {
	line := fmt.Sprintf("%s: %s %s", ch.name, ch.method, strings.TrimPrefix(c.server, "http://")+ch.path)
	fail := func(format string, a ...any) {
		c.failed++
		fmt.Fprintf(c.out, "FAIL %s: %s\n", line, fmt.Sprintf(format, a...))
	}
	req, err := http.NewRequestWithContext(c.ctx, ch.method, c.server+ch.path, nil)
	if err != nil {
		fail("%v", err)
		return nil, nil
	}
	for k, v := range ch.header {
		req.Header[k] = v
	}
	req.Header.Set("Accept-Encoding", "gzip")
	if ch.authed {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	res, err := c.client.Do(req)
	if err != nil {
		fail("%v", err)
		return nil, nil
	}
	body, err := readBody(res)
	if err != nil {
		fail("reading the body: %v", err)
		return nil, nil
	}
	if err := c.checker.Check(req, res, body); err != nil {
		fail("%d breaks the contract: %s", res.StatusCode, strings.ReplaceAll(err.Error(), "\n", "; "))
		return res, body
	}
	if !slices.Contains(ch.want, res.StatusCode) {
		fail("%d, want %v", res.StatusCode, ch.want)
		return res, body
	}
	c.passed++
	fmt.Fprintf(c.out, "ok   %s → %d\n", line, res.StatusCode)
	return res, body
}

// readBody reads and, when the answer is gzipped, decompresses the body: the check asks for
// gzip so that it sees what clients see.
func readBody(res *http.Response) ([]byte, error) {
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil || res.Header.Get("Content-Encoding") != "gzip" {
		return raw, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	res.Header.Del("Content-Encoding")
	return io.ReadAll(zr)
}

// unusedID is an id that no listed order has, counting down from the largest int64.
func unusedID(list []byte) int64 {
	var orders []struct {
		ID json.Number `json:"id"`
	}
	dec := json.NewDecoder(bytes.NewReader(list))
	dec.UseNumber()
	dec.Decode(&orders)
	used := map[string]bool{}
	for _, o := range orders {
		used[o.ID.String()] = true
	}
	for id := int64(math.MaxInt64); ; id-- {
		if !used[strconv.FormatInt(id, 10)] {
			return id
		}
	}
}
