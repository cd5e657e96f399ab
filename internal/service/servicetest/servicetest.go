// Package servicetest runs the real service for tests, as `orderd serve` runs it, on a free
// loopback port, and stops it when the test ends.
package servicetest

import (
	"context"
	"testing"

	"github.com/petstore/orderd/internal/service"
)

// Run opens the service of cfg on a free loopback port (whatever cfg.Addr says) and serves
// it until the test ends; then it shuts down as on SIGTERM, and the test fails if that was
// not clean.
func Run(tb testing.TB, cfg service.Config) *service.Service {
	tb.Helper()
	cfg.Addr = "127.0.0.1:0"
	ctx, stop := context.WithCancel(context.Background())
	svc, err := service.Open(ctx, cfg)
	if err != nil {
		stop()
		tb.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- svc.Run(ctx) }()
	tb.Cleanup(func() {
		stop()
		if err := <-ran; err != nil {
			tb.Errorf("service: %v", err)
		}
		svc.Close()
	})
	return svc
}
