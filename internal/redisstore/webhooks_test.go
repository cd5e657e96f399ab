package redisstore_test

import (
	"testing"
	"time"

	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/redistest"
	"github.com/petstore/orderd/internal/webhook"
	"github.com/petstore/orderd/internal/webhook/webhooktest"
)

func TestWebhooksConformance(t *testing.T) {
	rdb := client(t, redistest.Start(t))
	webhooktest.Run(t, func(tb testing.TB) webhook.Store {
		s, err := redisstore.NewWebhooks(rdb, redistest.Prefix(tb), time.Second)
		if err != nil {
			tb.Fatal(err)
		}
		return s
	})
}
