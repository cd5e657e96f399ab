// Command pages measures v2's pages at scale: a page of 100 at each size (10,000, 100,000 and
// 1,000,000 orders by default) in both stores, the SQLite file and a redis-server of its own
// on loopback, read by walking every page of a dense and of a sparse filter; and the heap
// while 8 readers walk every page at once. Each request's work is bounded by the store's
// budget (order.ScanBudget), so the latency at the largest size should stay within 2× of
// the smallest, and the heap should not grow with orders × readers. It prints a Markdown
// section for docs/benchmarks.md; progress goes to stderr.
//
//	go run ./bench/pages -sizes 10000    # a smoke run
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/redistest"
	"github.com/petstore/orderd/internal/service"
)

func main() {
	sizes := flag.String("sizes", "10000,100000,1000000", "numbers of orders, comma-separated, smallest first")
	stores := flag.String("stores", "sqlite,redis", "stores to measure, comma-separated")
	via := flag.String("via", "http", "http: requests to the service in this process, as a client sends them; store: calls of the store's Find")
	pageSize := flag.Int("page-size", 100, "orders a page of the latency walks")
	minPages := flag.Int("min-pages", 1000, "fewest pages timed per filter and size: small sizes are walked again until then")
	readers := flag.Int("readers", 8, "concurrent readers of the heap walk")
	heapPageSize := flag.Int("heap-page-size", 1000, "orders a page of the heap walk")
	flag.Parse()
	if *via != "http" && *via != "store" {
		log.Fatalf("-via %q: want http or store", *via)
	}
	var ns []int
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			log.Fatalf("-sizes: %q is not a number of orders", s)
		}
		ns = append(ns, n)
	}
	b := bench{via: *via, pageSize: *pageSize, minPages: *minPages, readers: *readers, heapPageSize: *heapPageSize}
	// An interrupt ends the walks, so that the stores are closed and the redis-servers
	// stopped on the way out.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	t0 := time.Now()
	for _, st := range strings.Split(*stores, ",") {
		if st != "sqlite" && st != "redis" {
			log.Fatalf("-stores: %q is not sqlite or redis", st)
		}
		if err := b.measure(ctx, st, ns); err != nil {
			stop()
			log.Fatalf("%s: %v", st, err) // measure has closed its stores
		}
	}
	b.took = time.Since(t0)
	b.report(os.Stdout)
}

// bench is one run's settings and what it measured.
type bench struct {
	via                   string
	pageSize, minPages    int
	readers, heapPageSize int
	results               []result
	took                  time.Duration
}

// result is what one store at one size measured.
type result struct {
	store   string
	orders  int
	seeding time.Duration
	walks   map[string]walked // by query name
	heap    heapWalk
}

// measure seeds a new store of kind st at each size, all open at once, then times the
// walks of every size interleaved, then the heap walks one size after the other.
func (b *bench) measure(ctx context.Context, st string, sizes []int) error {
	type opened struct {
		result
		p pager
	}
	var all []*opened
	for _, n := range sizes {
		r := &opened{result: result{store: st, orders: n, walks: map[string]walked{}}}
		p, closeP, err := b.open(ctx, st, n, &r.seeding)
		if err != nil {
			return fmt.Errorf("%d orders: %w", n, err)
		}
		defer closeP()
		r.p = p
		all = append(all, r)
	}

	progress("%s: timing the walks of every size, interleaved", st)
	var walkers []*walker
	for _, r := range all {
		for _, q := range []query{dense, sparse} {
			walkers = append(walkers, &walker{p: r.p, q: q, size: b.pageSize, minPages: b.minPages})
		}
	}
	if err := interleave(ctx, walkers); err != nil {
		return err
	}
	for i, k := range walkers {
		r := all[i/2]
		if want := matching(k.q, r.orders); k.w.orders != want {
			return fmt.Errorf("%d orders: a walk of %s saw %d orders, want %d", r.orders, k.q.name, k.w.orders, want)
		}
		r.walks[k.q.name] = k.w
		progress("%s, %d orders: %s: %d walks, %d pages, p50 %s, p99 %s", st, r.orders, k.q.name, k.w.walks, k.w.pages,
			percentile(k.w.took, 50), percentile(k.w.took, 99))
	}

	for _, r := range all {
		var err error
		if r.heap, err = walkConcurrently(ctx, r.p, dense, b.heapPageSize, b.readers, matching(dense, r.orders)); err != nil {
			return fmt.Errorf("%d orders: %w", r.orders, err)
		}
		progress("%s, %d orders: %d readers walked in %s, peak heap %s", st, r.orders, b.readers,
			r.heap.took.Round(time.Millisecond), mib(r.heap.peak))
		b.results = append(b.results, r.result)
	}
	return nil
}

// open makes a new store of kind st holding n orders, timing the seeding into *seeding,
// and returns the pager of b.via over it and what closes both.
func (b *bench) open(ctx context.Context, st string, n int, seeding *time.Duration) (_ pager, _ func(), err error) {
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	cfg := service.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	if st == "redis" {
		dir, err := os.MkdirTemp("", "pages-redis")
		if err != nil {
			return nil, nil, err
		}
		closers = append(closers, func() { os.RemoveAll(dir) })
		rs, err := redistest.Launch(dir)
		if err != nil {
			return nil, nil, err
		}
		closers = append(closers, rs.Stop)
		cfg.Store.RedisURL = rs.URL()
	} else {
		dir, err := os.MkdirTemp("", "pages")
		if err != nil {
			return nil, nil, err
		}
		closers = append(closers, func() { os.RemoveAll(dir) })
		cfg.Store.DB = filepath.Join(dir, "orderd.db")
	}

	progress("%s, %d orders: seeding", st, n)
	t0 := time.Now()
	key, err := seed(ctx, cfg.Store, n)
	if err != nil {
		return nil, nil, err
	}
	*seeding = time.Since(t0)
	progress("%s, %d orders: seeded in %s", st, n, seeding.Round(time.Millisecond))

	if b.via == "store" {
		stores, err := service.OpenStores(cfg.Store)
		if err != nil {
			return nil, nil, err
		}
		closers = append(closers, func() { stores.Close() })
		f, ok := stores.Orders.(order.Finder)
		if !ok {
			return nil, nil, fmt.Errorf("the %s store has no Find", stores.Mode())
		}
		return storePager{f}, closeAll, nil
	}
	ctx, stop := context.WithCancel(ctx)
	svc, err := service.Open(ctx, cfg)
	if err != nil {
		stop()
		return nil, nil, err
	}
	ran := make(chan error, 1)
	go func() { ran <- svc.Run(ctx) }()
	closers = append(closers, func() {
		stop()
		if err := <-ran; err != nil {
			log.Printf("service: %v", err)
		}
		svc.Close()
	})
	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64}}
	return httpPager{client: client, base: svc.URL(), key: key}, closeAll, nil
}

// matching counts the orders of 1 to n that q keeps: what a walk must see.
func matching(q query, n int) int {
	c := 0
	for id := 1; id <= n; id++ {
		if q.filter.Matches(orderAt(int64(id))) {
			c++
		}
	}
	return c
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "== pages: "+format+"\n", args...)
}
