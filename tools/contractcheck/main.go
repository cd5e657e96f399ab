// Command contractcheck checks a running instance against its contract, openapi.yaml (v1)
// and openapi-v2.yaml (v2), by calling every operation in ways that change nothing:
//
//	go run ./tools/contractcheck --base http://127.0.0.1:8080 --key KEY
//
// It prints a line per check and exits 1 when an answer breaks the contract, 2 for a bad flag.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

func main() { os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var cfg Config
	fs := flag.NewFlagSet("contractcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.Base, "base", "", "where the instance serves its versions, e.g. http://127.0.0.1:8080: /v1 and /v2 are checked; "+
		"ending in /v1 or /v2 (https://api.example/v1), that version alone")
	fs.StringVar(&cfg.Key, "key", "", "an API key of the instance (any plan); the checks use about twenty-five requests of its quota")
	fs.DurationVar(&cfg.Timeout, "timeout", 10*time.Second, "bound on each request")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int { fmt.Fprintln(stderr, "contractcheck:", err); return 2 }
	switch {
	case fs.NArg() > 0 || cfg.Base == "" || cfg.Key == "":
		return fail(errors.New("--base and --key are required"))
	case cfg.Timeout <= 0:
		return fail(fmt.Errorf("--timeout must be positive, not %s", cfg.Timeout))
	}
	c, err := New(cfg)
	if err != nil {
		return fail(fmt.Errorf("--base: %w", err))
	}
	if err := c.Run(ctx, stdout); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}
