package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/service"
)

// TestReadCacheIsLoggedOnce: the embedded mode says once, when it opens, whether the SQLite
// file's read cache is on (it is, on the systems the tests run on), at info.
func TestReadCacheIsLoggedOnce(t *testing.T) {
	cfg, _ := embedded(t, order.Free)
	var buf bytes.Buffer
	cfg.Logger = slog.New(slog.NewJSONHandler(&buf, nil))
	cfg.Addr = "127.0.0.1:0"
	svc, err := service.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	svc.Close()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if msg, _ := m["msg"].(string); strings.HasPrefix(msg, "sqlite read cache:") {
			lines = append(lines, m)
		}
	}
	if len(lines) != 1 || lines[0]["level"] != "INFO" || !strings.HasPrefix(lines[0]["msg"].(string), "sqlite read cache: on") {
		t.Fatalf("read cache lines: %v; want one, on, at info\n%s", lines, buf.String())
	}
}
