// Package gcpace keeps the garbage collector from running every few hundred requests.
//
// Go starts a collection when the heap has grown by GOGC percent (100 by default) of the
// live heap, and at 4 MiB at the least. orderd's live heap is small (a few MiB with a
// list of 100 orders) and every request allocates a few KiB, so under load Go collects
// dozens of times a second; each cycle costs far more than its share of marking would
// say: its workers take a core from the requests, goroutines assist, and write barriers
// are on. bench/notes.md ("GC pacing") has the measurements.
//
// The rule here: the heap may grow by Headroom beyond the live heap before a collection,
// or by GOGC=100's doubling when that is more. A small heap gets a fixed room to grow in
// (the memory it costs is bounded by Headroom), and a large one (a store of a million
// orders keeps its list's encoding, about 100 MiB) is paced as Go's default paces it,
// never with more than twice its live heap. After each collection the pacer sets GOGC
// (debug.SetGCPercent) to the percentage that gives that goal for the heap that cycle
// found live.
//
// The operator's setting wins: with GOGC in the environment (a number, or off), Start
// changes nothing. A GOMEMLIMIT still bounds the heap as Go documents, whatever GOGC
// this sets.
package gcpace

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// Headroom is how far the heap may grow beyond the live heap before a collection, at the
// least. 16 MiB took the list's CPU a request from about 55 µs to 42 (GOGC=100's goal is
// 4 MiB here); 32 and 64 MiB took no more, for 16 and 48 MiB more of peak RSS.
const Headroom = 16 << 20

// goDefault is Go's GOGC when none is set; the pacer never sets less.
const goDefault = 100

// minHeap is the heap goal Go keeps at the least, at GOGC=100; it scales with GOGC
// (runtime: heapMinimum = 4 MiB × GOGC/100).
const minHeap = 4 << 20

// Percent is the GOGC that makes the heap goal about live + headroom, and never less
// than goDefault. Go's goal is the larger of live × (1 + GOGC/100) and minHeap ×
// GOGC/100, so the percentage is bounded by both.
func Percent(live, headroom uint64) int {
	if live == 0 {
		live = 1
	}
	byLive := headroom * 100 / live
	byMinimum := (live + headroom) * 100 / minHeap
	p := min(byLive, byMinimum)
	if p < goDefault {
		return goDefault
	}
	if p > 1<<20 {
		return 1 << 20
	}
	return int(p)
}

// Start paces the collector by headroom unless getenv("GOGC") is set, and returns the
// function that stops pacing and gives GOGC back the value it had. The collector is the
// process's: while one pacer runs, another Start changes nothing (tests run several services
// in one process).
func Start(getenv func(string) string, headroom uint64) (stop func()) {
	if getenv("GOGC") != "" || !running.CompareAndSwap(false, true) {
		return func() {}
	}
	p := &pacer{headroom: headroom}
	p.sample[0].Name = liveHeap
	p.last = p.percent()
	previous := debug.SetGCPercent(p.last)
	p.arm()
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if !p.stopped {
			p.stopped = true
			debug.SetGCPercent(previous)
			running.Store(false)
		}
	}
}

// running is whether a pacer runs in this process.
var running atomic.Bool

// liveHeap is the runtime's measure of the heap the last collection found live.
const liveHeap = "/gc/heap/live:bytes"

type pacer struct {
	headroom uint64
	mu       sync.Mutex // held while GOGC is set: stop never races a cycle's update
	stopped  bool
	sample   [1]metrics.Sample
	last     int // the GOGC set last
}

// percent is the GOGC for the live heap the last collection found.
func (p *pacer) percent() int {
	metrics.Read(p.sample[:])
	live := uint64(0)
	if p.sample[0].Value.Kind() == metrics.KindUint64 {
		live = p.sample[0].Value.Uint64()
	}
	return Percent(live, p.headroom)
}

// sentinel is garbage from the moment it is made: its finalizer runs after the collection
// that finds it, which is how the pacer learns that a cycle has ended. It holds a pointer,
// so that it is never one of the tiny allocations whose finalizers may never run.
type sentinel struct{ p *pacer }

func (p *pacer) arm() {
	runtime.SetFinalizer(&sentinel{p}, func(s *sentinel) {
		p := s.p
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.stopped {
			return
		}
		if pct := p.percent(); pct != p.last {
			p.last = pct
			debug.SetGCPercent(pct)
		}
		p.arm()
	})
}
