// Command ceiling is the benchmark's ceiling: the same echo stack as orderd with no
// middleware, served by the same http.Server (its timeouts cost each request too), answering
// precomputed bytes. No service that does its work can be faster; make bench reports orderd
// as a ratio of it.
//
// v2's find answers by the query's shape, each with one page recorded for that shape (--pet,
// --ship-from): a petId, a status with a shipDateFrom, a status, or none; any other parameter
// (the unique one of a row that no cache may hold) is ignored, as orderd ignores it.
//
// Each answer of the benchmark's rows is recorded once, at start, from a running orderd
// (--from, --key): its status, its header fields and its body, plain or gzipped as orderd
// gzips it. The ceiling then sends each as recorded, so that a ratio measures orderd's work
// per request and nothing else. That includes the fields: the rate-limit fields, the request
// id, Vary and the rest are on every answer orderd may send (openapi.yaml), so their bytes are
// the contract's cost, paid by any server of it; making their values is orderd's work, and
// stays in the ratio. Only Date is the ceiling's own, as it is every Go server's.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/redisstore"
)

// The paths the benchmark asks for, besides the list.
const (
	pagePath     = "/v2/store/orders?pageSize=100"
	notFoundPath = "/v1/store/orders/999999999"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18200", "address to listen on")
	from := flag.String("from", "", "a running orderd (http://host:port) to record the answers from, once")
	key := flag.String("key", "", "an API key of that orderd")
	redisURL := flag.String("redis-url", "", "decide each request in this Redis first, as orderd's limiter does (the floor of a Redis deployment)")
	pet := flag.String("pet", "", "the pet whose first page answers every find by petId")
	shipFrom := flag.String("ship-from", "", "the shipDateFrom whose first page (status=pending) answers every find by status and shipDateFrom")
	flag.Parse()
	a, err := record(*from, *key, *pet, *shipFrom)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		os.Exit(2)
	}

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(io.Discard)
	if *redisURL != "" {
		decide, err := redisDecision(*redisURL)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ceiling:", err)
			os.Exit(2)
		}
		e.Use(decide)
	}
	e.GET("/v1/store/orders", func(c echo.Context) error {
		h := c.Request().Header
		switch {
		case h.Get("Authorization") == "":
			return a.noKey.send(c)
		case h.Get("If-None-Match") == a.etag:
			return a.notModified.send(c)
		case strings.Contains(h.Get("Accept-Encoding"), "gzip"):
			return a.listGzip.send(c)
		}
		return a.list.send(c)
	})
	e.GET("/v2/store/orders", func(c echo.Context) error {
		switch q := c.Request().URL.RawQuery; {
		case strings.Contains(q, "petId="):
			return a.petPage.send(c)
		case strings.Contains(q, "shipDateFrom="):
			return a.statusFromPage.send(c)
		case strings.Contains(q, "status="):
			return a.statusPage.send(c)
		case strings.Contains(c.Request().Header.Get("Accept-Encoding"), "gzip"):
			return a.pageGzip.send(c)
		}
		return a.page.send(c)
	})
	e.DELETE("/v1/store/orders/:orderId", func(c echo.Context) error {
		return a.notFound.send(c)
	})
	fmt.Fprintln(os.Stderr, "ceiling listening on", *addr)
	srv := api.HTTPServer(e, slog.Default())
	srv.Addr = *addr
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		os.Exit(1)
	}
}

// answer is one of orderd's answers as it came: status, header fields but Date, and body.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// send writes the answer as recorded. The field values are shared, never changed.
func (a answer) send(c echo.Context) error {
	h := c.Response().Header()
	for name, values := range a.header {
		h[name] = values
	}
	c.Response().WriteHeader(a.status)
	_, err := c.Response().Write(a.body)
	return err
}

// answers are orderd's answers to the benchmark's rows, and the list's tag.
type answers struct {
	list, listGzip, notModified, page, pageGzip, notFound, noKey answer
	statusPage, petPage, statusFromPage                          answer
	etag                                                         string
}

// record asks orderd at from for each row's answer.
func record(from, key, pet, shipFrom string) (answers, error) {
	if from == "" || key == "" || pet == "" || shipFrom == "" {
		return answers{}, errors.New("--from, --key, --pet and --ship-from are required")
	}
	var a answers
	var err error
	get := func(method, path, key string, want int, fields ...string) answer {
		if err != nil {
			return answer{}
		}
		var r answer
		r, err = fetch(method, from+path, key, want, fields...)
		return r
	}
	a.list = get(http.MethodGet, "/v1/store/orders", key, http.StatusOK)
	if a.etag = a.list.header.Get("Etag"); err == nil && a.etag == "" {
		return answers{}, errors.New("the list came without an ETag")
	}
	a.listGzip = get(http.MethodGet, "/v1/store/orders", key, http.StatusOK, "Accept-Encoding", "gzip")
	a.notModified = get(http.MethodGet, "/v1/store/orders", key, http.StatusNotModified, "If-None-Match", a.etag)
	a.page = get(http.MethodGet, pagePath, key, http.StatusOK)
	a.pageGzip = get(http.MethodGet, pagePath, key, http.StatusOK, "Accept-Encoding", "gzip")
	a.statusPage = get(http.MethodGet, pagePath+"&status=pending", key, http.StatusOK)
	a.petPage = get(http.MethodGet, pagePath+"&petId="+url.QueryEscape(pet), key, http.StatusOK)
	a.statusFromPage = get(http.MethodGet, pagePath+"&status=pending&shipDateFrom="+url.QueryEscape(shipFrom), key, http.StatusOK)
	a.notFound = get(http.MethodDelete, notFoundPath, key, http.StatusNotFound)
	a.noKey = get(http.MethodGet, "/v1/store/orders", "", http.StatusUnauthorized)
	return a, err
}

// fetch is orderd's answer to method url with key (none when "") and the header fields given
// as name, value, ...; its status must be want. Accept-Encoding is identity unless given, as
// wrk sends none; naming it turns off the client's own decompression, so a gzipped body is
// kept so.
func fetch(method, url, key string, want int, fields ...string) (answer, error) {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Accept-Encoding", "identity")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(fields); i += 2 {
		req.Header.Set(fields[i], fields[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	switch {
	case err != nil:
		return answer{}, err
	case res.StatusCode != want:
		return answer{}, fmt.Errorf("%s %s: %s, want %d", method, url, res.Status, want)
	case (req.Header.Get("Accept-Encoding") == "gzip") != (res.Header.Get("Content-Encoding") == "gzip"):
		return answer{}, fmt.Errorf("%s %s (Accept-Encoding %q): Content-Encoding %q", method, url,
			req.Header.Get("Accept-Encoding"), res.Header.Get("Content-Encoding"))
	}
	res.Header.Del("Date")
	return answer{status: res.StatusCode, header: res.Header, body: body}, nil
}

// redisDecision is the one step every request of a Redis deployment takes before its answer:
// the shared limiter's decision (by the hash of the credentials, as a key is found), a round
// trip batched with the other requests in flight, by orderd's own limiter. Nothing else of
// orderd's work is done: no key lookup, no version read, no header made. So a ceiling with it,
// the floor, bounds what a server of the contract with limits exact across instances can
// serve on this machine, whatever else it does.
func redisDecision(url string) (echo.MiddlewareFunc, error) {
	rdb, err := redisstore.Open(url, 0)
	if err != nil {
		return nil, err
	}
	limiter, err := redisstore.NewLimiter(rdb, redisstore.LimiterOptions{Prefix: "orderd-ceiling"})
	if err != nil {
		return nil, err
	}
	unlimited := order.Limits{PerMinute: order.MaxLimit, PerDay: order.MaxLimit}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			caller := ratelimit.KeyCaller(string(order.HashOf(c.Request().Header.Get("Authorization"))))
			if _, err := limiter.Allow(c.Request().Context(), caller, unlimited); err != nil {
				return c.NoContent(http.StatusServiceUnavailable)
			}
			return next(c)
		}
	}, nil
}
