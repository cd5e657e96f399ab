// Command genorders writes N orders as orderd's data file (a JSON array), shaped as users'
// stores are: ids 1..N, pets drawn at random from a million ids, ship dates at a random second
// of 2026 (RFC 3339, UTC), about 60% pending, 25% shipped and 15% cancelled, quantity 1 to 9,
// complete for shipped orders. The same -seed gives the same file.
//
// With -pets FILE it also writes the pets that have orders, one id a line, in the order their
// first order comes, for a client that asks for a different pet on each request.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"time"
)

const (
	pets = 1_000_000
	year = 365 * 24 * 60 * 60 // seconds in 2026
)

func main() {
	n := flag.Int("n", 100_000, "how many orders")
	seed := flag.Uint64("seed", 1, "seed of the pseudo-random choices")
	petsOut := flag.String("pets", "", "also write the pets that have orders to this file, one id a line")
	flag.Parse()
	if err := write(*n, *seed, *petsOut); err != nil {
		fmt.Fprintln(os.Stderr, "genorders:", err)
		os.Exit(1)
	}
}

func write(n int, seed uint64, petsOut string) error {
	r := rand.New(rand.NewPCG(seed, 0x6f72646572)) // "order"
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := bufio.NewWriterSize(os.Stdout, 1<<16)
	seen := make(map[int64]bool)
	var firstPets []int64
	w.WriteString("[\n")
	var b []byte
	for id := 1; id <= n; id++ {
		pet := 1 + r.Int64N(pets)
		ship := start.Add(time.Duration(r.Int64N(year)) * time.Second)
		status := "pending"
		switch p := r.IntN(100); {
		case p >= 85:
			status = "cancelled"
		case p >= 60:
			status = "shipped"
		}
		quantity := 1 + r.IntN(9)
		if !seen[pet] {
			seen[pet] = true
			firstPets = append(firstPets, pet)
		}
		b = b[:0]
		if id > 1 {
			b = append(b, ",\n"...)
		}
		b = append(b, `{"id":`...)
		b = strconv.AppendInt(b, int64(id), 10)
		b = append(b, `,"petId":`...)
		b = strconv.AppendInt(b, pet, 10)
		b = append(b, `,"quantity":`...)
		b = strconv.AppendInt(b, int64(quantity), 10)
		b = append(b, `,"shipDate":"`...)
		b = ship.AppendFormat(b, time.RFC3339)
		b = append(b, `","complete":`...)
		b = strconv.AppendBool(b, status == "shipped")
		b = append(b, `,"status":"`...)
		b = append(b, status...)
		b = append(b, `"}`...)
		w.Write(b)
	}
	w.WriteString("\n]\n")
	if err := w.Flush(); err != nil {
		return err
	}
	if petsOut == "" {
		return nil
	}
	f, err := os.Create(petsOut)
	if err != nil {
		return err
	}
	pw := bufio.NewWriter(f)
	for _, p := range firstPets {
		pw.WriteString(strconv.FormatInt(p, 10))
		pw.WriteByte('\n')
	}
	if err := pw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
