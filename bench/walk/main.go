// Command walk reads every order a v2 query finds, as one client: the first page, then the
// page each nextPageToken names, until an answer has none. It prints the walk's wall time, the
// orders and pages seen, and fails (exit 1) unless every order came exactly once, in ascending
// id order, matching the status asked for, and as many as -want says.
//
//	walk -url http://127.0.0.1:8080 -key KEY -size 1000 [-query status=pending] [-want 100000]
//
// Output, one line: "SECONDS ORDERS PAGES". Plain JSON (no gzip), keep-alive, loopback.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"
)

func main() {
	base := flag.String("url", "", "orderd's address, http://host:port")
	key := flag.String("key", "", "API key")
	size := flag.Int("size", 100, "pageSize")
	query := flag.String("query", "", "the filters, as a query string (status=pending&petId=7)")
	want := flag.Int("want", 0, "fail unless the walk sees exactly this many orders (0: any)")
	flag.Parse()
	q, err := url.ParseQuery(*query)
	if err != nil || *base == "" || *key == "" {
		fmt.Fprintln(os.Stderr, "walk: -url and -key are required, -query must be a query string")
		os.Exit(2)
	}
	w := walker{base: *base, key: *key, query: q, size: *size, statuses: q["status"],
		client: &http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 1}}}
	t0 := time.Now()
	err = w.walk(*want)
	took := time.Since(t0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "walk %s pageSize=%d: FAILED after %d pages, %d orders: %v\n", *query, *size, w.pages, w.orders, err)
		os.Exit(1)
	}
	fmt.Printf("%.3f %d %d\n", took.Seconds(), w.orders, w.pages)
}

type walker struct {
	base, key string
	query     url.Values
	size      int
	statuses  []string // every order seen must have one, when any
	client    *http.Client

	seen          []uint64 // a bit per order id
	last          int64    // the last id seen
	orders, pages int
}

func (w *walker) walk(want int) error {
	maxPages := 10_000_000 // bounds a walk whose tokens never end
	if want > 0 {
		maxPages = 2*(want/w.size) + 1000 // pages may be short or empty, not this many
	}
	w.last = -1
	token := ""
	for {
		if w.pages >= maxPages {
			return fmt.Errorf("no last page after %d pages", w.pages)
		}
		next, err := w.page(token)
		if err != nil {
			return fmt.Errorf("page %d: %w", w.pages+1, err)
		}
		w.pages++
		if next == "" {
			break
		}
		token = next
	}
	if want > 0 && w.orders != want {
		return fmt.Errorf("saw %d orders, want %d", w.orders, want)
	}
	return nil
}

// page reads one page and returns its nextPageToken ("" on the last page).
func (w *walker) page(token string) (string, error) {
	q := url.Values{}
	for k, v := range w.query {
		q[k] = v
	}
	q.Set("pageSize", strconv.Itoa(w.size))
	if token != "" {
		q.Set("pageToken", token)
	}
	req, err := http.NewRequest(http.MethodGet, w.base+"/v2/store/orders?"+q.Encode(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+w.key)
	res, err := w.client.Do(req)
	if err != nil {
		return "", err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return "", err
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", res.Status, bytes.TrimSpace(body))
	}
	return w.scan(body)
}

// scan reads the ids (and statuses) of a page as orderd encodes it, compact, each order's
// fields in name order, checking each, and returns the next page's token.
func (w *walker) scan(body []byte) (string, error) {
	const head = `{"orders":[`
	if !bytes.HasPrefix(body, []byte(head)) {
		return "", fmt.Errorf("not a page: %.80q", body)
	}
	end := bytes.LastIndexByte(body, ']')
	if end < 0 {
		return "", errors.New("no end of the orders")
	}
	orders, rest := body[len(head):end], body[end+1:]
	for len(orders) > 0 {
		obj := orders
		if i := bytes.IndexByte(orders, '}'); i >= 0 {
			obj, orders = orders[:i+1], bytes.TrimPrefix(orders[i+1:], []byte(","))
		} else {
			return "", fmt.Errorf("unended order: %.80q", orders)
		}
		id, err := intField(obj, `"id":`)
		if err != nil {
			return "", err
		}
		if id <= w.last {
			return "", fmt.Errorf("order %d after order %d: not in ascending id order", id, w.last)
		}
		w.last = id
		if w.mark(id) {
			return "", fmt.Errorf("order %d seen twice", id)
		}
		if !w.statusKept(obj) {
			return "", fmt.Errorf("order %d has none of the statuses %v: %s", id, w.statuses, obj)
		}
		w.orders++
	}
	const tok = `"nextPageToken":"`
	i := bytes.Index(rest, []byte(tok))
	if i < 0 {
		return "", nil
	}
	t := rest[i+len(tok):]
	j := bytes.IndexByte(t, '"')
	if j <= 0 {
		return "", fmt.Errorf("bad nextPageToken: %.80q", rest)
	}
	return string(t[:j]), nil
}

// statusKept reports whether the order obj has one of the statuses asked for (or none was).
func (w *walker) statusKept(obj []byte) bool {
	for _, st := range w.statuses {
		if bytes.Contains(obj, []byte(`"status":"`+st+`"`)) {
			return true
		}
	}
	return len(w.statuses) == 0
}

// mark records id as seen, and reports whether it was already.
func (w *walker) mark(id int64) bool {
	i := int(id / 64)
	for i >= len(w.seen) {
		w.seen = append(w.seen, make([]uint64, len(w.seen)+1024)...)
	}
	bit := uint64(1) << (id % 64)
	was := w.seen[i]&bit != 0
	w.seen[i] |= bit
	return was
}

func intField(obj []byte, name string) (int64, error) {
	i := bytes.Index(obj, []byte(name))
	if i < 0 {
		return 0, fmt.Errorf("order without %s: %s", name, obj)
	}
	v := obj[i+len(name):]
	j := 0
	for j < len(v) && v[j] >= '0' && v[j] <= '9' {
		j++
	}
	n, err := strconv.ParseInt(string(v[:j]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("order's %s: %v", name, err)
	}
	return n, nil
}
