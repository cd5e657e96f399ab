package sqlitestore_test

import (
	"path/filepath"
	"testing"

	"github.com/petstore/orderd/internal/sqlitestore"
	"github.com/petstore/orderd/internal/webhook"
	"github.com/petstore/orderd/internal/webhook/webhooktest"
)

func TestWebhooksConformance(t *testing.T) {
	webhooktest.Run(t, func(tb testing.TB) webhook.Store {
		return sqlitestore.NewWebhooks(mustOpen(tb, filepath.Join(tb.TempDir(), "orderd.db")))
	})
}
