package e2e

import (
	"testing"

	"github.com/petstore/orderd/internal/api/apitest"
)

// metric reads one series of an instance's /metrics (0 when it has none yet).
func (in *instance) metric(t *testing.T, series string) float64 {
	t.Helper()
	return apitest.Metric(t, in.url, series)
}
