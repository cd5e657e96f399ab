// Command ceiling is the benchmark's ceiling: the same echo stack as orderd with no
// middleware, answering precomputed bytes. No service that does its work can be faster;
// make bench reports orderd as a ratio of it.
//
// The bodies of the list and of v2's page are read once, at start, from a running orderd
// (--from, --key): the ceiling then sends exactly the bytes orderd sends, plain or gzipped as
// orderd gzips them (each once per version of the orders, at its level), with the list's
// ETag, so that a ratio
// measures orderd's work per request and nothing else. Every answer carries its
// Content-Length, as orderd's do: a chunked answer would cost the ceiling a write that
// orderd does not make.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
)

// pagePath is the v2 page the benchmark asks for.
const pagePath = "/v2/store/orders?pageSize=100"

func main() {
	addr := flag.String("addr", "127.0.0.1:18200", "address to listen on")
	from := flag.String("from", "", "a running orderd (http://host:port) to read the answers from, once")
	key := flag.String("key", "", "an API key of that orderd")
	flag.Parse()
	a, err := read(*from, *key)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		os.Exit(2)
	}
	notFound := []byte(`{"code":"order_not_found","message":"order 999999999: no such order","status":404}`)
	unauthorized := []byte(`{"code":"unauthorized","message":"no API key: send the header Authorization: Bearer API_KEY","status":401}`)

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(io.Discard)
	e.GET("/v1/store/orders", func(c echo.Context) error {
		h := c.Request().Header
		switch {
		case h.Get("Authorization") == "":
			return blob(c, http.StatusUnauthorized, unauthorized, false)
		case h.Get("If-None-Match") == a.etag:
			c.Response().Header()["Etag"] = []string{a.etag}
			return c.NoContent(http.StatusNotModified)
		case strings.Contains(h.Get("Accept-Encoding"), "gzip"):
			return blob(c, http.StatusOK, a.listGzip, true)
		}
		return blob(c, http.StatusOK, a.list, false)
	})
	e.GET("/v2/store/orders", func(c echo.Context) error {
		if strings.Contains(c.Request().Header.Get("Accept-Encoding"), "gzip") {
			return blob(c, http.StatusOK, a.pageGzip, true)
		}
		return blob(c, http.StatusOK, a.page, false)
	})
	e.DELETE("/v1/store/orders/:orderId", func(c echo.Context) error {
		return blob(c, http.StatusNotFound, notFound, false)
	})
	fmt.Fprintln(os.Stderr, "ceiling listening on", *addr)
	if err := http.ListenAndServe(*addr, e); err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		os.Exit(1)
	}
}

// blob answers body as JSON with its length, gzipped when it is.
func blob(c echo.Context, status int, body []byte, gzipped bool) error {
	h := c.Response().Header()
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	if gzipped {
		h["Content-Encoding"] = []string{"gzip"}
	}
	return c.Blob(status, echo.MIMEApplicationJSON, body)
}

// answers are the bodies orderd sent, and the list's tag.
type answers struct {
	list, listGzip, page, pageGzip []byte
	etag                           string
}

// read asks orderd at from for the list and the page, plain and gzipped.
func read(from, key string) (answers, error) {
	if from == "" || key == "" {
		return answers{}, errors.New("--from and --key are required")
	}
	var a answers
	var err error
	get := func(path string, gzipped bool) ([]byte, http.Header) {
		if err != nil {
			return nil, nil
		}
		var b []byte
		var h http.Header
		b, h, err = fetch(from+path, key, gzipped)
		return b, h
	}
	var h http.Header
	a.list, h = get("/v1/store/orders", false)
	a.listGzip, _ = get("/v1/store/orders", true)
	a.page, _ = get(pagePath, false)
	a.pageGzip, _ = get(pagePath, true)
	if err != nil {
		return answers{}, err
	}
	if a.etag = h.Get("Etag"); a.etag == "" {
		return answers{}, errors.New("the list came without an ETag")
	}
	return a, nil
}

// fetch is the body of a GET of url, which must be a 200, and its headers. Asked for gzip,
// the body must come gzipped and is kept so (naming Accept-Encoding turns off the client's
// own decompression).
func fetch(url, key string, gzipped bool) ([]byte, http.Header, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if gzipped {
		req.Header.Set("Accept-Encoding", "gzip")
	} else {
		req.Header.Set("Accept-Encoding", "identity")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	switch {
	case err != nil:
		return nil, nil, err
	case res.StatusCode != http.StatusOK:
		return nil, nil, fmt.Errorf("GET %s: %s", url, res.Status)
	case gzipped != (res.Header.Get("Content-Encoding") == "gzip"):
		return nil, nil, fmt.Errorf("GET %s (gzip %v): Content-Encoding %q", url, gzipped, res.Header.Get("Content-Encoding"))
	}
	return b, res.Header, nil
}
