// Command client is an example client of the Store Order Service: it lists the orders and,
// with --cancel, cancels one first, through the client oapi-codegen generates from
// openapi.yaml (package orderclient); `client find` walks every page of a find through
// version 2 (package orderclientv2, from openapi-v2.yaml), and `client watch` follows the
// order events. All wait out 429 and 503 answers as the API asks: Retry-After, then
// exponential backoff with jitter.
//
//	ORDERD_KEY=osk_… go run ./examples/client --base http://127.0.0.1:8080 --cancel 2
//	ORDERD_KEY=osk_… go run ./examples/client find --status pending --page-size 2
//	ORDERD_KEY=osk_… go run ./examples/client watch --type order.cancelled
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// attemptTimeout bounds one HTTP attempt; the waits between attempts are bounded apart.
const attemptTimeout = 30 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// run is the whole program but for the process: flags and environment in, text out, so that
// tests run it in-process against the real service.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if watch, rest := isWatch(args); watch {
		// A stream lasts as long as it follows: only its answer's start is bounded.
		streams := &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: attemptTimeout}}
		return runWatch(ctx, newRetryDoer(streams), rest, getenv, stdout, stderr)
	}
	doer := newRetryDoer(&http.Client{Timeout: attemptTimeout})
	if find, rest := isFind(args); find {
		return runFind(ctx, doer, rest, getenv, stdout, stderr)
	}
	return runWith(ctx, doer, args, getenv, stdout, stderr)
}

// exitCode reports err on stderr and maps it to the exit status the usage promises.
func exitCode(err error, stderr io.Writer) int {
	var usage usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &usage):
		fmt.Fprintln(stderr, "client:", err)
		return 2
	default:
		fmt.Fprintln(stderr, "client:", err)
		return 1
	}
}
