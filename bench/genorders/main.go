// Command genorders writes N orders as orderd's data file, for benchmarks: ids 1..N, every
// state, ship dates over a year.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	n := flag.Int("n", 100, "how many orders")
	flag.Parse()
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	states := []string{"pending", "shipped", "cancelled"}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w.WriteString("[\n")
	for i := 1; i <= *n; i++ {
		if i > 1 {
			w.WriteString(",\n")
		}
		st := states[i%3]
		fmt.Fprintf(w, `{"id":%d,"petId":%d,"quantity":%d,"shipDate":"%s","complete":%t,"status":"%s"}`,
			i, 1000+i%977, 1+i%9, start.Add(time.Duration(i%365)*24*time.Hour).Format(time.RFC3339), st == "shipped", st)
	}
	w.WriteString("\n]\n")
}
