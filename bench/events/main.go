// Command events measures what order events cost and how fast they travel, against running
// instances of orderd (bench/events.sh starts them):
//
//	events cancel  -base URL -key KEY -ids N            cancels of N pending orders: rate, p50, p99
//	events streams -a URL -b URL -key KEY -streams 1000 -events 50 -ids N
//
// streams opens the streams on B, then cancels one pending order at a time on A and times,
// for every stream, the arrival of its event from just before the cancel was sent.
// Pending orders are bench/genorders' ids that are multiples of 3.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: events cancel|streams [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	base := fs.String("base", "", "cancel: the instance's URL")
	a := fs.String("a", "", "streams: the instance that cancels")
	b := fs.String("b", "", "streams: the instance that holds the streams")
	key := fs.String("key", "", "an API key with room for the whole run")
	ids := fs.Int("ids", 10000, "how many pending orders there are to cancel (ids 3, 6, 9, …)")
	workers := fs.Int("c", 32, "cancel: concurrent clients")
	streams := fs.Int("streams", 1000, "streams: how many streams B holds")
	events := fs.Int("events", 50, "streams: how many cancels to time")
	fs.Parse(os.Args[2:])
	var err error
	switch os.Args[1] {
	case "cancel":
		err = cancelLoad(*base, *key, *ids, *workers)
	case "streams":
		err = streamDelays(*a, *b, *key, *streams, *events)
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "events:", err)
		os.Exit(1)
	}
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2000, MaxConnsPerHost: 2000}}

func cancel(base, key string, id int) error {
	req, _ := http.NewRequest("DELETE", base+"/v1/store/orders/"+strconv.Itoa(id), nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		return fmt.Errorf("cancel %d: %s", id, res.Status)
	}
	return nil
}

// cancelLoad cancels every pending order once, with workers clients, and prints
// "rate p50_ms p99_ms": each cancel is a write (and, with events, an event).
func cancelLoad(base, key string, n, workers int) error {
	var next atomic.Int64
	took := make([][]time.Duration, workers)
	errs := make(chan error, workers)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1))
				if i > n {
					return
				}
				t0 := time.Now()
				if err := cancel(base, key, 3*i); err != nil {
					errs <- err
					return
				}
				took[w] = append(took[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	select {
	case err := <-errs:
		return err
	default:
	}
	all := slices.Concat(took...)
	slices.Sort(all)
	fmt.Printf("%.0f %.2f %.2f\n", float64(len(all))/elapsed.Seconds(), ms(quantile(all, 0.5)), ms(quantile(all, 0.99)))
	return nil
}

// streamDelays prints "p50_ms p99_ms max_ms samples": the delay from just before a cancel on
// a to the arrival of its event on each of b's streams.
func streamDelays(a, b, key string, nStreams, nEvents int) error {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	res, err := get(ctx, a+"/v1/store/orders", key, "")
	if err != nil {
		return err
	}
	from := res.Header.Get("Orders-Event-Id")
	res.Body.Close()

	type arrival struct {
		order int64
		at    time.Time
	}
	arrivals := make(chan arrival, nStreams*4)
	ready := make(chan error, nStreams)
	for range nStreams {
		go func() {
			res, err := get(ctx, b+"/v2/store/events?type=order.cancelled&after="+from, key, "text/event-stream")
			if err == nil && res.StatusCode != http.StatusOK {
				err = fmt.Errorf("stream: %s", res.Status)
			}
			ready <- err
			if err != nil {
				return
			}
			defer res.Body.Close()
			sc := bufio.NewScanner(res.Body)
			for sc.Scan() {
				data, ok := strings.CutPrefix(sc.Text(), "data: ")
				if !ok {
					continue
				}
				var e struct {
					Order struct{ ID int64 } `json:"order"`
				}
				if json.Unmarshal([]byte(data), &e) == nil {
					arrivals <- arrival{e.Order.ID, time.Now()}
				}
			}
		}()
	}
	for range nStreams {
		if err := <-ready; err != nil {
			return err
		}
	}
	var delays []time.Duration
	for i := 1; i <= nEvents; i++ {
		id := 3 * i
		sent := time.Now()
		if err := cancel(a, key, id); err != nil {
			return err
		}
		timeout := time.After(10 * time.Second)
		for got := 0; got < nStreams; {
			select {
			case ar := <-arrivals:
				if ar.order != int64(id) {
					return fmt.Errorf("a stream got order %d while %d was awaited", ar.order, id)
				}
				delays = append(delays, ar.at.Sub(sent))
				got++
			case <-timeout:
				return fmt.Errorf("event %d: %d of %d streams got it within 10 s", i, got, nStreams)
			}
		}
	}
	slices.Sort(delays)
	fmt.Printf("%.1f %.1f %.1f %d\n", ms(quantile(delays, 0.5)), ms(quantile(delays, 0.99)), ms(delays[len(delays)-1]), len(delays))
	return nil
}

func get(ctx context.Context, url, key, accept string) (*http.Response, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	return client.Do(req)
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
