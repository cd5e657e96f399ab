package main

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// maxPages bounds every walk: more pages than a walk of the largest size could need means the
// tokens do not move forward.
const maxPages = 2_000_000

// walked is what the walks of one query at one size saw.
type walked struct {
	walks, pages, orders int             // orders: of one walk
	took                 []time.Duration // each page's, in the walks' order
}

// walker walks every page of one query, again from the first page after the last, timing
// each request, until it has timed at least minPages pages and finished the walk it is in.
type walker struct {
	p        pager
	q        query
	size     int
	minPages int

	token  string
	orders int // so far in the current walk
	w      walked
}

// done reports whether the walker has timed enough pages and is between two walks.
func (k *walker) done() bool { return k.w.walks > 0 && k.w.pages >= k.minPages && k.token == "" }

// step reads the next page.
func (k *walker) step(ctx context.Context) error {
	if k.w.pages >= maxPages {
		return fmt.Errorf("%s: no end after %d pages", k.q.name, maxPages)
	}
	t0 := time.Now()
	n, next, err := k.p.page(ctx, k.q, k.size, k.token)
	if err != nil {
		return fmt.Errorf("page %d of %s: %w", k.w.pages+1, k.q.name, err)
	}
	k.w.took = append(k.w.took, time.Since(t0))
	k.w.pages++
	k.orders += n
	k.token = next
	if next == "" {
		if k.w.walks > 0 && k.orders != k.w.orders {
			return fmt.Errorf("%s: a walk saw %d orders, the one before it %d", k.q.name, k.orders, k.w.orders)
		}
		k.w.walks++
		k.w.orders, k.orders = k.orders, 0
	}
	return nil
}

// interleave steps the walkers one page each in turn until every one is done, so that a
// change in the shared machine's load falls on all of them alike.
func interleave(ctx context.Context, walkers []*walker) error {
	for {
		busy := false
		for _, k := range walkers {
			if k.done() {
				continue
			}
			busy = true
			if err := k.step(ctx); err != nil {
				return err
			}
		}
		if !busy {
			return nil
		}
	}
}

// walk reads every page of q from the first to the last, once.
func walk(ctx context.Context, p pager, q query, size int) (walked, error) {
	k := &walker{p: p, q: q, size: size}
	for !k.done() {
		if err := k.step(ctx); err != nil {
			return k.w, err
		}
	}
	return k.w, nil
}

// heapWalk is what readers walking every page of a query at once cost in heap.
type heapWalk struct {
	before, peak uint64 // heap in use after a GC before the walk, and its peak during it
	pages        int    // read by all the readers together
	took         time.Duration
}

// walkConcurrently has readers each walk every page of q at once, sampling the heap in use
// every 5 ms meanwhile; each reader must see the same number of orders, want.
func walkConcurrently(ctx context.Context, p pager, q query, size, readers, want int) (heapWalk, error) {
	runtime.GC()
	h := heapWalk{before: heapInUse()}
	var peak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if v := heapInUse(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	t0 := time.Now()
	errs := make([]error, readers)
	pages := make([]int, readers)
	var wg sync.WaitGroup
	for r := range readers {
		wg.Go(func() {
			w, err := walk(ctx, p, q, size)
			pages[r] = w.pages
			if err == nil && w.orders != want {
				err = fmt.Errorf("reader %d saw %d orders of %s, want %d", r, w.orders, q.name, want)
			}
			errs[r] = err
		})
	}
	wg.Wait()
	h.took = time.Since(t0)
	close(done)
	<-sampled
	h.peak = peak.Load()
	for r := range readers {
		if errs[r] != nil {
			return h, errs[r]
		}
		h.pages += pages[r]
	}
	return h, nil
}

func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// percentile returns the p-th percentile (0 < p ≤ 100) of d, by the nearest rank.
func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}
