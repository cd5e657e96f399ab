package api_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
	"github.com/petstore/orderd/internal/sqlitestore"
)

// onEachStore runs f with a harness whose orders (and finder) are orders, in a SQLite file
// (embedded mode) and in a real Redis (Redis mode): the list serves both through one path.
func onEachStore(t *testing.T, orders []order.Order, f func(t *testing.T, h *harness)) {
	t.Run("embedded", func(t *testing.T) {
		db := openDB(t)
		if _, err := db.Import(context.Background(), orders, nil); err != nil {
			t.Fatal(err)
		}
		s := sqlitestore.NewOrders(db)
		f(t, newHarness(t, func(c *api.Config) { c.Orders = s }))
	})
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t)
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
		t.Cleanup(func() { rdb.Close() })
		s, err := redisstore.NewOrders(rdb, redistest.Prefix(t), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Import(context.Background(), orders); err != nil {
			t.Fatal(err)
		}
		f(t, newHarness(t, func(c *api.Config) { c.Orders = s }))
	})
}

// sendCoded sends a request with the harness's key and the given headers, through a client
// that asks for no coding itself and so leaves a gzipped body as sent. It checks the answer
// against the contract (its body decompressed) and returns it with the body as sent and the
// body decompressed.
func (h *harness) sendCoded(tb testing.TB, method, path string, header ...string) (res *http.Response, sent, plain []byte) {
	tb.Helper()
	req := h.request(tb, method, path, append([]string{"Authorization", "Bearer " + h.key}, header...)...)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	res, err := client.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	if sent, err = io.ReadAll(res.Body); err != nil {
		tb.Fatal(err)
	}
	plain = sent
	checked := *res
	if res.Header.Get("Content-Encoding") == "gzip" && len(sent) > 0 {
		zr, err := gzip.NewReader(bytes.NewReader(sent))
		if err != nil {
			tb.Fatalf("%s %s: Content-Encoding gzip, but %v", method, path, err)
		}
		if plain, err = io.ReadAll(zr); err != nil {
			tb.Fatalf("%s %s: %v", method, path, err)
		}
		checked.Header = res.Header.Clone()
		checked.Header.Del("Content-Encoding")
		checked.Header.Del("Content-Length")
	}
	if err := h.contract.Check(req, &checked, plain); err != nil {
		tb.Errorf("%s %s → %d breaks the contract: %v", method, path, res.StatusCode, err)
	}
	return res, sent, plain
}

// wantGzipList checks the headers of a 200 of the list: gzipped or not, its Content-Length
// that of the body as sent (length: the body's, HEAD's too), and Vary as it always is.
func wantGzipList(tb testing.TB, res *http.Response, gzipped bool, length int) {
	tb.Helper()
	if res.StatusCode != 200 || (res.Header.Get("Content-Encoding") == "gzip") != gzipped ||
		res.Header.Get("Content-Length") != strconv.Itoa(length) ||
		!slices.Equal(res.Header.Values("Vary"), []string{"Accept-Encoding"}) {
		tb.Fatalf("%d, Content-Encoding %q, Content-Length %q for %d bytes, Vary %q; want gzip %v",
			res.StatusCode, res.Header.Get("Content-Encoding"), res.Header.Get("Content-Length"), length,
			res.Header.Values("Vary"), gzipped)
	}
}

// TestListGzipIsThePlainList: on both stores, a client that accepts gzip gets the list's
// plain bytes gzipped, with their own length and the same ETag, and after a cancel the new
// list's (never a stale encoding); HEAD gets the same headers and no body; a 304 is never
// compressed.
func TestListGzipIsThePlainList(t *testing.T) {
	onEachStore(t, ordertest.Many(1000), func(t *testing.T, h *harness) {
		var lastGzip []byte
		for round := range 2 {
			res, plain, _ := h.sendCoded(t, "GET", "/v1/store/orders")
			wantGzipList(t, res, false, len(plain))
			etag := res.Header.Get("ETag")

			res, sent, unzipped := h.sendCoded(t, "GET", "/v1/store/orders", "Accept-Encoding", "gzip")
			wantGzipList(t, res, true, len(sent))
			if !bytes.Equal(unzipped, plain) {
				t.Fatalf("round %d: the gzip list is not the plain one:\n%.200s\n%.200s", round, unzipped, plain)
			}
			if res.Header.Get("ETag") != etag {
				t.Fatalf("round %d: ETag %q gzipped, %q plain", round, res.Header.Get("ETag"), etag)
			}
			if bytes.Equal(sent, lastGzip) {
				t.Fatalf("round %d: the gzip bytes of the list before the cancel", round)
			}
			lastGzip = sent

			res, _, _ = h.sendCoded(t, "GET", "/v1/store/orders", "Accept-Encoding", "gzip")
			wantGzipList(t, res, true, len(sent))

			res, body, _ := h.sendCoded(t, "HEAD", "/v1/store/orders", "Accept-Encoding", "gzip")
			wantGzipList(t, res, true, len(sent))
			if len(body) != 0 || res.Header.Get("ETag") != etag {
				t.Fatalf("round %d: HEAD: %d bytes, ETag %q", round, len(body), res.Header.Get("ETag"))
			}

			res, body, _ = h.sendCoded(t, "GET", "/v1/store/orders", "Accept-Encoding", "gzip", "If-None-Match", etag)
			if res.StatusCode != http.StatusNotModified || res.Header.Get("Content-Encoding") != "" || len(body) != 0 ||
				res.Header.Get("ETag") != etag || !slices.Equal(res.Header.Values("Vary"), []string{"Accept-Encoding"}) {
				t.Fatalf("round %d: 304: %d, Content-Encoding %q, %d bytes, ETag %q, Vary %q", round, res.StatusCode,
					res.Header.Get("Content-Encoding"), len(body), res.Header.Get("ETag"), res.Header.Values("Vary"))
			}

			// A pending order of ordertest.Many is cancelled: the next round sees the change.
			res, _, _ = h.sendCoded(t, "DELETE", "/v1/store/orders/"+strconv.Itoa(round*12))
			if res.StatusCode != http.StatusNoContent {
				t.Fatalf("cancel: %d", res.StatusCode)
			}
		}
	})
}

// TestAcceptEncodingDecidesBothPaths: Accept-Encoding is read as RFC 9110 says, the same
// way for the list (gzipped once per version) and for a page of version 2 (gzipped once when
// found): q=0 refuses gzip, "*" stands for it when it is not named, identity's weight is
// weighed against it, every line of the header counts.
func TestAcceptEncodingDecidesBothPaths(t *testing.T) {
	db := openDB(t)
	if _, err := db.Import(context.Background(), ordertest.Many(100), nil); err != nil {
		t.Fatal(err)
	}
	s := sqlitestore.NewOrders(db)
	h := newHarness(t, func(c *api.Config) { c.Orders = s })
	for _, tc := range []struct {
		accept []string // the lines of Accept-Encoding
		gzip   bool
	}{
		{nil, false},
		{[]string{""}, false},
		{[]string{"gzip"}, true},
		{[]string{"GZip"}, true},
		{[]string{"x-gzip"}, true},
		{[]string{"gzip, deflate, br, zstd"}, true},
		{[]string{"br", "gzip"}, true}, // the second line counts
		{[]string{"gzip;q=0"}, false},
		{[]string{"gzip; q=0.000"}, false},
		{[]string{"gzip;Q=0"}, false},
		{[]string{"gzip;q=0.001"}, true},
		{[]string{"gzip;q=1.0"}, true},
		{[]string{"gzip;q=0, *"}, false}, // named, gzip is refused whatever "*" says
		{[]string{"*"}, true},
		{[]string{"*;q=0"}, false},
		{[]string{"br, *;q=0.5"}, true},
		{[]string{"br"}, false},
		{[]string{"identity"}, false},
		{[]string{"identity, gzip;q=0.5"}, false}, // plain is preferred
		{[]string{"identity;q=0.5, gzip;q=0.5"}, true},
		{[]string{"*;q=0.1, gzip;q=0.2"}, true},
		{[]string{"gzip;q=2"}, false},   // no qvalue: the element counts for nothing
		{[]string{"gzip;q=abc"}, false}, // likewise
		{[]string{"gzip;q=0.0001"}, false},
		{[]string{"nogzip"}, false}, // echo's strings.Contains took this for gzip
	} {
		var header []string
		for _, line := range tc.accept {
			header = append(header, "Accept-Encoding", line)
		}
		for _, path := range []string{"/v1/store/orders", "/v2/store/orders?pageSize=100"} {
			res, sent, _ := h.sendCoded(t, "GET", path, header...)
			if res.StatusCode != 200 || (res.Header.Get("Content-Encoding") == "gzip") != tc.gzip {
				t.Errorf("Accept-Encoding %q, %s: %d, Content-Encoding %q; want gzip %v",
					tc.accept, path, res.StatusCode, res.Header.Get("Content-Encoding"), tc.gzip)
			}
			if !slices.Equal(res.Header.Values("Vary"), []string{"Accept-Encoding"}) {
				t.Errorf("Accept-Encoding %q, %s: Vary %q", tc.accept, path, res.Header.Values("Vary"))
			}
			if cl := res.Header.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(sent)) {
				t.Errorf("Accept-Encoding %q, %s: Content-Length %s for %d bytes", tc.accept, path, cl, len(sent))
			}
		}
	}
}

// TestShortAndUnchangedAnswersArePlain: for a client that accepts gzip, a body under 256
// bytes (a page of one order) is sent plain with its length, and a 304 without a body is
// not marked compressed; both vary with Accept-Encoding.
func TestShortAndUnchangedAnswersArePlain(t *testing.T) {
	h := newHarness(t)
	res, body, _ := h.sendCoded(t, "GET", "/v2/store/orders?pageSize=1", "Accept-Encoding", "gzip")
	if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "" || len(body) >= 256 ||
		res.Header.Get("Content-Length") != strconv.Itoa(len(body)) ||
		!slices.Equal(res.Header.Values("Vary"), []string{"Accept-Encoding"}) {
		t.Fatalf("a short page: %d, Content-Encoding %q, Content-Length %q for %d bytes, Vary %q", res.StatusCode,
			res.Header.Get("Content-Encoding"), res.Header.Get("Content-Length"), len(body), res.Header.Values("Vary"))
	}
	res, body, _ = h.sendCoded(t, "GET", "/v2/store/orders?pageSize=1", "Accept-Encoding", "gzip", "If-None-Match", res.Header.Get("ETag"))
	if res.StatusCode != http.StatusNotModified || res.Header.Get("Content-Encoding") != "" || len(body) != 0 ||
		!slices.Equal(res.Header.Values("Vary"), []string{"Accept-Encoding"}) {
		t.Fatalf("304: %d, Content-Encoding %q, %d bytes, Vary %q", res.StatusCode,
			res.Header.Get("Content-Encoding"), len(body), res.Header.Values("Vary"))
	}
}
