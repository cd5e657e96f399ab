package main

import (
	"context"
	"flag"
	"io"
	"time"

	"github.com/petstore/orderd/internal/contractcheck"
)

// contractCheck runs `orderd contract-check`: see package contractcheck. Its exit status is
// 1 when an answer breaks the contract.
func contractCheck(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	var cfg contractcheck.Config
	fs := flag.NewFlagSet("contract-check", flag.ContinueOnError)
	fs.StringVar(&cfg.Base, "base", "", "where the instance serves its versions, e.g. http://127.0.0.1:8080: /v1 and /v2 are checked; "+
		"ending in /v1 or /v2 (https://api.example/v1), that version alone")
	fs.StringVar(&cfg.Key, "key", "", "an API key of the instance (any plan); the checks use about twenty-five requests of its quota")
	fs.DurationVar(&cfg.Timeout, "timeout", 10*time.Second, "bound on each request")
	fs.Usage = flagUsage(fs, "orderd contract-check --base URL --key KEY")
	rest, err := parseFlags(fs, args, getenv, stdout)
	if err != nil {
		return err
	}
	if len(rest) > 0 || cfg.Base == "" || cfg.Key == "" {
		return usageErrorf("contract-check: --base and --key are required")
	}
	if cfg.Timeout <= 0 {
		return usageErrorf("contract-check: --timeout must be positive, not %s", cfg.Timeout)
	}
	checker, err := contractcheck.New(cfg)
	if err != nil {
		return usageErrorf("contract-check: --base: %w", err)
	}
	return checker.Run(ctx, stdout)
}
