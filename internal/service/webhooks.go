package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/petstore/orderd/internal/metrics"
	"github.com/petstore/orderd/internal/webhook"
)

var _ webhook.Observer = (*metrics.Metrics)(nil)

// deliverWebhooks starts this instance's Deliverer; stop cancels it and waits for it to end:
// its attempts in flight are cut, and it releases its leases for another instance to take.
func (s *Service) deliverWebhooks(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	cfg := s.cfg.Webhooks
	d := webhook.NewDeliverer(webhook.Config{
		Store:    s.stores.Webhooks,
		Events:   s.stores.Events,
		Client:   webhook.NewClient(cfg.AllowPrivate),
		Owner:    instanceName(),
		Poll:     cfg.Poll,
		LeaseTTL: cfg.LeaseTTL,
		Schedule: cfg.Schedule,
		Observer: s.metrics,
		Logger:   s.log,
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx)
	}()
	return func() { cancel(); <-done }
}

// instanceName names this process in the leases it holds: the host and the pid, for the
// operator, and a random part, for two processes are never one.
func instanceName() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	rand.Read(b) // never fails (crypto/rand)
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b))
}
