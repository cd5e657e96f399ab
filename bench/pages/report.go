package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// report writes the Markdown section.
func (b *bench) report(w io.Writer) {
	first, last := b.results[0].orders, b.results[len(b.results)-1].orders
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	via := "over HTTP: `GET /v2/store/orders` to the service running in the bench's own process " +
		"(as `orderd serve`, access log off), with a key whose limits never refuse"
	if b.via == "store" {
		via = "at the store level: calls of the store's `Find` (`-via store`), without HTTP"
	}
	p("## v2: pages at scale")
	p("")
	p("Made by `go run ./bench/pages` (in `make bench`) on %s, in %s: v2's pages read %s,", time.Now().UTC().Format("2006-01-02"), b.took.Round(time.Second), via)
	p("from the SQLite file and from a redis-server of the bench's own on loopback (nothing persisted).")
	p("The machine: %d cores (%s), %s; the bench, the service and redis-server share the cores,", runtime.NumCPU(), cpuModel(), runtime.Version())
	p("so the ratios, not the absolute figures, are the result.")
	p("")
	p("The orders are ids 1 to N: 89%% pending, 10%% shipped, 1%% cancelled; ship dates cycle over")
	p("%d days, so each day holds 1 order in %d, spread evenly over the ids. Two filters:", shipDays, shipDays)
	p("")
	p("- **%s**: read from the pending state's index in both stores.", dense.name)
	p("- **%s**: `shipDateFrom`/`shipDateBefore` around one day. No index in id order", sparse.name)
	p("  serves it, so both stores walk every id within the budget: about 1000 entries examined")
	p("  for each order returned, the worst case for bounded work. Most of its pages hold one order")
	p("  and a `nextPageToken`.")
	p("")
	p("Latency is of every page of whole walks from the first page to the last (pages of %d), so it", b.pageSize)
	p("covers the whole id range; a size whose walk is shorter than %d pages is walked again until", b.minPages)
	p("then. The walks of every size of a store run interleaved, a page of each in turn, so that the")
	p("machine's load falls on them alike. The ratio compares %s orders with %s; its goal is under 2×.", num(last), num(first))
	p("")
	p("| store | orders | seeding | filter | walks | pages timed | orders a walk | p50 | p99 |")
	p("|---|---:|---:|---|---:|---:|---:|---:|---:|")
	for _, r := range b.results {
		for i, q := range []query{dense, sparse} {
			wk := r.walks[q.name]
			seeding := ""
			if i == 0 {
				seeding = r.seeding.Round(time.Millisecond * 100).String()
			}
			p("| %s | %s | %s | %s | %s | %s | %s | %s | %s |", r.store, num(r.orders), seeding, q.name, num(wk.walks), num(wk.pages), num(wk.orders),
				ms(percentile(wk.took, 50)), ms(percentile(wk.took, 99)))
		}
	}
	if first == last {
		p("")
		p("(One size only: no ratio.)")
	} else {
		b.ratios(p, first, last)
	}
	p("")
	p("Heap: %d readers at once each walk every page of the dense filter (pages of %d), while the", b.readers, b.heapPageSize)
	p("heap in use of the whole process (service, store client and readers) is sampled every 5 ms.")
	p("")
	p("| store | orders | pages read | walk time | heap in use before | peak during the walk | peak ÷ peak at %s |", num(first))
	p("|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range b.results {
		lo := b.find(r.store, first)
		p("| %s | %s | %s | %s | %s | %s | %s |", r.store, num(r.orders), num(r.heap.pages), r.heap.took.Round(time.Millisecond*100),
			mib(r.heap.before), mib(r.heap.peak), strconv.FormatFloat(float64(r.heap.peak)/float64(lo.heap.peak), 'f', 2, 64)+"×")
	}
}

// ratios writes the table of each store's latency at the largest size over the smallest.
func (b *bench) ratios(p func(string, ...any), first, last int) {
	p("")
	p("| store | filter | p50, %s ÷ %s | p99, %s ÷ %s |", num(last), num(first), num(last), num(first))
	p("|---|---|---:|---:|")
	for _, st := range b.stores() {
		lo, hi := b.find(st, first), b.find(st, last)
		for _, q := range []query{dense, sparse} {
			p("| %s | %s | %s | %s |", st, q.name,
				ratio(percentile(hi.walks[q.name].took, 50), percentile(lo.walks[q.name].took, 50)),
				ratio(percentile(hi.walks[q.name].took, 99), percentile(lo.walks[q.name].took, 99)))
		}
	}
}

// stores lists the stores measured, in the order of the run.
func (b *bench) stores() []string {
	var out []string
	for _, r := range b.results {
		if len(out) == 0 || out[len(out)-1] != r.store {
			out = append(out, r.store)
		}
	}
	return out
}

func (b *bench) find(store string, orders int) result {
	for _, r := range b.results {
		if r.store == store && r.orders == orders {
			return r
		}
	}
	panic("no result for " + store + " at " + strconv.Itoa(orders))
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if name, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimLeft(name, "\t :"))
		}
	}
	return runtime.GOARCH
}

func ratio(a, b time.Duration) string {
	return strconv.FormatFloat(float64(a)/float64(b), 'f', 2, 64) + "×"
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 2, 64) + " ms"
}

func mib(b uint64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + " MiB" }

// num writes n with thousands separators.
func num(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
