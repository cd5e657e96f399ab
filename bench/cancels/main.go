// Command cancels is the background writer of the benchmark's mixed rows: it cancels orders
// (DELETE /v1/store/orders/{id}) at a steady rate, one at a time, for a bounded time, taking
// the ids from a file (one a line, pending orders) after the first -skip of them.
//
//	cancels -url http://127.0.0.1:8080 -key KEY -ids pending.txt -skip 0 -rate 10 -for 5s
//
// It prints "SENT ANSWERED_204" when done (or on SIGTERM) and fails if any answer was not 204.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	base := flag.String("url", "", "orderd's address, http://host:port")
	key := flag.String("key", "", "API key")
	idsFile := flag.String("ids", "", "ids to cancel, one a line")
	skip := flag.Int("skip", 0, "ids of the file to pass over (those cancelled before)")
	rate := flag.Float64("rate", 10, "cancels a second")
	dur := flag.Duration("for", 5*time.Second, "how long to send them")
	flag.Parse()
	ids, err := readIDs(*idsFile, *skip, int(*rate*dur.Seconds())+1)
	if err != nil || *base == "" || *key == "" || *rate <= 0 {
		fmt.Fprintln(os.Stderr, "cancels: -url, -key, -ids with enough ids and a positive -rate are required:", err)
		os.Exit(2)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	client := &http.Client{Timeout: 10 * time.Second}
	tick := time.NewTicker(time.Duration(float64(time.Second) / *rate))
	defer tick.Stop()
	deadline := time.After(*dur)
	sent, ok := 0, 0
	var bad []string
loop:
	for _, id := range ids {
		select {
		case <-stop:
			break loop
		case <-deadline:
			break loop
		case <-tick.C:
		}
		sent++
		req, _ := http.NewRequest(http.MethodDelete, *base+"/v1/store/orders/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+*key)
		res, err := client.Do(req)
		if err != nil {
			bad = append(bad, id+": "+err.Error())
			continue
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode == http.StatusNoContent {
			ok++
		} else if len(bad) < 5 {
			bad = append(bad, id+": "+res.Status)
		}
	}
	fmt.Println(sent, ok)
	if ok != sent {
		fmt.Fprintln(os.Stderr, "cancels: answers not 204:", strings.Join(bad, "; "))
		os.Exit(1)
	}
}

// readIDs reads up to n ids from file after the first skip.
func readIDs(file string, skip, n int) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ids []string
	s := bufio.NewScanner(f)
	for i := 0; s.Scan() && len(ids) < n; i++ {
		if i >= skip {
			ids = append(ids, strings.TrimSpace(s.Text()))
		}
	}
	if len(ids) < n {
		return nil, fmt.Errorf("%s: %d ids after %d, want %d", file, len(ids), skip, n)
	}
	return ids, s.Err()
}
