// Command openload offers a fixed rate of requests to a server on loopback and reports the
// latency percentiles of the answers. wrk is closed-loop: each connection sends its next
// request only when the last is answered, so a server that stalls is offered less and the
// requests it would have delayed are never sent. openload is open-loop: request i is due at
// start + i/rate whatever the server does, and its latency is measured from that due time,
// so time spent waiting for a free connection counts against the server (no coordinated
// omission).
//
//	openload -url http://127.0.0.1:8080/v1/store/orders -H 'Authorization: Bearer KEY' -rate 15000
//
// It prints one line of figures (-terse) or a short report: p50, p90, p99 and p99.9 in
// milliseconds, the rate achieved, errors, non-2xx answers, and the requests sent late
// (more than -late after they were due: no connection was free, or the generator fell behind).
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type headers []string

func (h *headers) String() string     { return strings.Join(*h, ", ") }
func (h *headers) Set(v string) error { *h = append(*h, v); return nil }

func main() {
	var hdrs headers
	rawURL := flag.String("url", "", "URL to request (loopback only)")
	method := flag.String("method", "GET", "request method")
	flag.Var(&hdrs, "H", "request header 'Name: value' (repeatable)")
	rate := flag.Float64("rate", 1000, "requests per second offered")
	conns := flag.Int("c", 32, "keep-alive connections")
	duration := flag.Duration("d", 5*time.Second, "measured duration")
	warmup := flag.Duration("warmup", time.Second, "duration offered at the same rate before measuring, not counted")
	timeout := flag.Duration("timeout", 5*time.Second, "a request not answered this long after it was sent is an error")
	late := flag.Duration("late", time.Millisecond, "a request sent this long after it was due counts as late")
	clientKind := flag.String("client", "raw", "raw (HTTP/1.1 written on net.Conn) or nethttp (net/http's Transport)")
	terse := flag.Bool("terse", false, "print one line: offered p50 p90 p99 p99.9 (ms) achieved errors non2xx late sent")
	flag.Parse()

	u, err := url.Parse(*rawURL)
	if err == nil {
		err = loopbackOnly(u)
	}
	if err == nil && (*rate <= 0 || *conns <= 0 || *duration <= 0) {
		err = errors.New("-rate, -c and -d must be positive")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "openload:", err)
		os.Exit(2)
	}
	var newClient func() client
	switch *clientKind {
	case "raw":
		req, err := rawRequest(*method, u, hdrs)
		if err != nil {
			fmt.Fprintln(os.Stderr, "openload:", err)
			os.Exit(2)
		}
		newClient = func() client { return &rawClient{addr: u.Host, req: req, timeout: *timeout} }
	case "nethttp":
		c := newNetHTTP(*method, u.String(), hdrs, *conns, *timeout)
		newClient = func() client { return c }
	default:
		fmt.Fprintln(os.Stderr, "openload: -client is raw or nethttp")
		os.Exit(2)
	}

	r := run(plan{rate: *rate, conns: *conns, warmup: *warmup, duration: *duration, late: *late}, newClient)
	if *terse {
		fmt.Println(r.terse(*rate))
	} else {
		fmt.Print(r.report(*rate))
	}
}

// loopbackOnly refuses a URL whose host is not a loopback address: openload is for benchmarks
// on this machine, never for loading someone else's server.
func loopbackOnly(u *url.URL) error {
	if u.Scheme != "http" {
		return fmt.Errorf("%q: only http:// URLs", u.String())
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q: the host must be a loopback address", host)
	}
	if u.Port() == "" {
		u.Host = net.JoinHostPort(host, "80")
	}
	return nil
}

// client sends one request and waits for its whole answer. A client is used by one
// goroutine at a time.
type client interface {
	do() (status int, err error)
}

// plan is what to offer.
type plan struct {
	rate             float64
	conns            int
	warmup, duration time.Duration
	late             time.Duration
}

// result is what was measured over the measured duration (the warm-up is not in it).
type result struct {
	latencies []time.Duration // from due time to the end of the answer, answered requests only
	sent      int             // requests due in the measured duration
	errors    int             // not answered: connection errors and timeouts
	non2xx    int
	late      int // sent more than plan.late after they were due
	elapsed   time.Duration
	answered  int // answers that arrived within the measured duration
	total     int // requests offered, warm-up included
}

// run offers the plan. Each connection's worker takes the next request in line, waits until
// it is due if it is not yet, and sends it: while every connection is busy the requests due
// wait in line, and the wait is part of their latency.
func run(p plan, newClient func() client) result {
	interval := float64(time.Second) / p.rate
	total := int(p.rate * (p.warmup + p.duration).Seconds())
	warmN := int(p.rate * p.warmup.Seconds())

	type outcome struct {
		lat     time.Duration
		end     time.Time
		status  int
		err     error
		wasLate bool
	}
	outcomes := make([]outcome, total)
	start := time.Now().Add(10 * time.Millisecond)
	at := func(i int) time.Time { return start.Add(time.Duration(float64(i) * interval)) }

	var next atomic.Int64 // the next request in line, due at start + next*interval
	var wg sync.WaitGroup
	for range p.conns {
		c := newClient()
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= total {
					return
				}
				t := at(i)
				if d := time.Until(t); d > 0 {
					time.Sleep(d)
				}
				sentAt := time.Now()
				status, err := c.do()
				end := time.Now()
				outcomes[i] = outcome{lat: end.Sub(t), end: end, status: status, err: err, wasLate: sentAt.Sub(t) > p.late}
			}
		})
	}
	wg.Wait()

	measureStart, measureEnd := at(warmN), at(total)
	r := result{elapsed: measureEnd.Sub(measureStart), total: total}
	for _, o := range outcomes[warmN:] {
		r.sent++
		if o.wasLate {
			r.late++
		}
		if o.err != nil {
			r.errors++
			continue
		}
		if o.status < 200 || o.status > 299 {
			r.non2xx++
		}
		r.latencies = append(r.latencies, o.lat)
		if !o.end.After(measureEnd) {
			r.answered++
		}
	}
	slices.Sort(r.latencies)
	return r
}

// percentile is the q-quantile of the sorted latencies (nearest rank), in milliseconds.
func (r result) percentile(q float64) float64 {
	if len(r.latencies) == 0 {
		return 0
	}
	i := int(q*float64(len(r.latencies))+0.5) - 1
	i = max(0, min(i, len(r.latencies)-1))
	return float64(r.latencies[i]) / float64(time.Millisecond)
}

// achieved is the answers that arrived within the measured duration, per second: below the
// offered rate when the server cannot keep up.
func (r result) achieved() float64 { return float64(r.answered) / r.elapsed.Seconds() }

func (r result) terse(offered float64) string {
	return fmt.Sprintf("%.0f %.3f %.3f %.3f %.3f %.0f %d %d %d %d", offered,
		r.percentile(0.5), r.percentile(0.9), r.percentile(0.99), r.percentile(0.999),
		r.achieved(), r.errors, r.non2xx, r.late, r.sent)
}

func (r result) report(offered float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "offered   %.0f/s for %s: %d requests\n", offered, r.elapsed.Round(time.Millisecond), r.sent)
	fmt.Fprintf(&b, "achieved  %.0f/s (answers within the measured duration)\n", r.achieved())
	fmt.Fprintf(&b, "latency from the due time: p50 %.3fms  p90 %.3fms  p99 %.3fms  p99.9 %.3fms\n",
		r.percentile(0.5), r.percentile(0.9), r.percentile(0.99), r.percentile(0.999))
	fmt.Fprintf(&b, "errors    %d (no answer), non-2xx %d\n", r.errors, r.non2xx)
	fmt.Fprintf(&b, "late      %d sent more than their allowance after they were due\n", r.late)
	fmt.Fprintf(&b, "CPU of openload: %s\n", cpuPerRequest(r.total))
	return b.String()
}

// cpuPerRequest is openload's own CPU time (user + system) per request: what the generator
// took from the cores it shares with the server.
func cpuPerRequest(n int) string {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil || n == 0 {
		return "unknown"
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return fmt.Sprintf("%s in all, about %.1fµs a request", cpu.Round(time.Millisecond), float64(cpu)/float64(time.Microsecond)/float64(n))
}
