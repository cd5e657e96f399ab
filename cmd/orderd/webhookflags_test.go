package main

import (
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/webhook"
)

// TestWebhookDeliveryFlags: without flags the schedule and the lease are the deliverer's
// defaults, as they were before the flags; the flags and their variables set them.
func TestWebhookDeliveryFlags(t *testing.T) {
	redis := []string{"--redis-url", "redis://127.0.0.1:1"} // parsing connects to nothing
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	cfg, _, err := parseServe(redis, env(nil), io.Discard)
	if err != nil || !reflect.DeepEqual(cfg.Webhooks.Schedule, webhook.DefaultSchedule) || cfg.Webhooks.LeaseTTL != 30*time.Second {
		t.Fatalf("defaults: %v, %+v, lease %s", err, cfg.Webhooks.Schedule, cfg.Webhooks.LeaseTTL)
	}
	cfg, _, err = parseServe(append(redis, "--webhooks-retry", "100ms, 1s,1s,1m30s", "--webhooks-give-up", "1h", "--webhooks-lease", "2s"), env(nil), io.Discard)
	want := webhook.Schedule{Backoff: []time.Duration{100 * time.Millisecond, time.Second, time.Second, 90 * time.Second}, GiveUpAfter: time.Hour, Jitter: 0.1}
	if err != nil || !reflect.DeepEqual(cfg.Webhooks.Schedule, want) || cfg.Webhooks.LeaseTTL != 2*time.Second {
		t.Fatalf("flags: %v, %+v, lease %s", err, cfg.Webhooks.Schedule, cfg.Webhooks.LeaseTTL)
	}
	vars := map[string]string{"ORDERD_WEBHOOKS_RETRY": "1s,2s", "ORDERD_WEBHOOKS_GIVE_UP": "10m", "ORDERD_WEBHOOKS_LEASE": "1m"}
	cfg, _, err = parseServe(redis, env(vars), io.Discard)
	want = webhook.Schedule{Backoff: []time.Duration{time.Second, 2 * time.Second}, GiveUpAfter: 10 * time.Minute, Jitter: 0.1}
	if err != nil || !reflect.DeepEqual(cfg.Webhooks.Schedule, want) || cfg.Webhooks.LeaseTTL != time.Minute {
		t.Fatalf("variables: %v, %+v, lease %s", err, cfg.Webhooks.Schedule, cfg.Webhooks.LeaseTTL)
	}
	if !reflect.DeepEqual(webhook.DefaultSchedule.Backoff[:2], []time.Duration{5 * time.Second, 30 * time.Second}) {
		t.Fatalf("parsing the flag changed the default schedule: %v", webhook.DefaultSchedule.Backoff)
	}
}
