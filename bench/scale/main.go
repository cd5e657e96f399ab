// Command scale measures the list at scale: 10,000, 100,000 and 1,000,000 orders served in
// embedded mode over loopback, read by 1 and then 8 concurrent clients: time to first byte,
// total time, bytes, and peak heap. The heap must not grow with readers × orders: the list
// is encoded once per version and shared. It prints a Markdown section for
// docs/benchmarks.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/plan"
	"github.com/petstore/orderd/internal/service"
)

func main() {
	sizes := flag.String("sizes", "10000,100000,1000000", "list sizes")
	readers := flag.Int("readers", 8, "concurrent readers")
	rounds := flag.Int("rounds", 3, "requests per reader")
	flag.Parse()
	fmt.Println("## The list at scale")
	fmt.Println()
	fmt.Printf("Made by `go run ./bench/scale` (in `make bench`): embedded mode over loopback, no gzip;\n")
	fmt.Printf("the first request encodes the list (cold), later ones share that encoding. Peak heap is\n")
	fmt.Printf("sampled every 5 ms while 1, then %d, readers each read the list %d times.\n\n", *readers, *rounds)
	fmt.Println("| orders | bytes | cold: first byte / total | 1 reader: p50 first byte / total | " + strconv.Itoa(*readers) + " readers: p50 first byte / total | heap before | peak, 1 reader | peak, " + strconv.Itoa(*readers) + " readers |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(s)
		if err != nil {
			log.Fatal(err)
		}
		measure(n, *readers, *rounds)
	}
}

func measure(n, readers, rounds int) {
	orders := make([]order.Order, n)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range orders {
		orders[i] = order.Order{ID: int64(i + 1), PetID: int64(1000 + i%977), Quantity: int32(1 + i%9),
			ShipDate: start.Add(time.Duration(i%365) * 24 * time.Hour), Status: order.StatusPending}
	}
	dir, _ := os.MkdirTemp("", "scale")
	defer os.RemoveAll(dir)
	cfg := service.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.Store.DB = filepath.Join(dir, "orderd.db")
	key := prepareDB(cfg.Store, orders)
	orders = nil // in the file now
	ctx, stop := context.WithCancel(context.Background())
	svc, err := service.Open(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- svc.Run(ctx) }()
	defer func() {
		stop()
		if err := <-ran; err != nil {
			log.Fatal(err)
		}
		svc.Close()
	}()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64}}

	get := func() (ttfb, total time.Duration, size int64) {
		req, _ := http.NewRequest("GET", svc.URL()+"/v1/store/orders", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		var first time.Time
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotFirstResponseByte: func() { first = time.Now() },
		}))
		t0 := time.Now()
		res, err := client.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		size, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			log.Fatalf("status %d", res.StatusCode)
		}
		return first.Sub(t0), time.Since(t0), size
	}

	runtime.GC()
	before := heapInUse()
	coldFirst, coldTotal, size := get()
	peak1, firsts1, totals1 := sampled(func() { readAll(1, rounds, get) })
	peakN, firstsN, totalsN := sampled(func() { readAll(readers, rounds, get) })
	fmt.Printf("| %d | %s | %s / %s | %s / %s | %s / %s | %s | %s | %s |\n", n, mib(size),
		ms(coldFirst), ms(coldTotal), ms(p50(firsts1)), ms(p50(totals1)), ms(p50(firstsN)), ms(p50(totalsN)),
		mib(int64(before)), mib(int64(peak1)), mib(int64(peakN)))
}

// prepareDB imports orders into a new file, as `orderd import` would, and makes a key
// without limits that matter, as `orderd keys create` would, and returns it.
func prepareDB(sc service.StoreConfig, orders []order.Order) string {
	sc.CreateDB = true
	stores, err := service.OpenStores(sc)
	if err != nil {
		log.Fatal(err)
	}
	defer stores.Close()
	if _, err := stores.Import(context.Background(), orders, nil); err != nil {
		log.Fatal(err)
	}
	key, rec, err := auth.NewKey("scale", plan.Enterprise, plan.Limits{PerMinute: 1 << 40, PerDay: 1 << 40}, time.Now())
	if err != nil {
		log.Fatal(err)
	}
	if err := stores.Keys.Add(context.Background(), rec); err != nil {
		log.Fatal(err)
	}
	return key
}

var timings struct {
	sync.Mutex
	firsts, totals []time.Duration
}

func readAll(readers, rounds int, get func() (time.Duration, time.Duration, int64)) {
	var wg sync.WaitGroup
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				f, t, _ := get()
				timings.Lock()
				timings.firsts = append(timings.firsts, f)
				timings.totals = append(timings.totals, t)
				timings.Unlock()
			}
		}()
	}
	wg.Wait()
}

// sampled runs work while sampling the heap, and returns the peak and the work's timings.
func sampled(work func()) (peak uint64, firsts, totals []time.Duration) {
	runtime.GC()
	timings.firsts, timings.totals = nil, nil
	var max atomic.Uint64
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if h := heapInUse(); h > max.Load() {
				max.Store(h)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	work()
	close(done)
	return max.Load(), timings.firsts, timings.totals
}

func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func p50(d []time.Duration) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) + " ms"
}
func mib(b int64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + " MiB" }
