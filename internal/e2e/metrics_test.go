package e2e

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// metric reads one series of an instance's /metrics (0 when it has none yet).
func (in *instance) metric(t *testing.T, series string) float64 {
	t.Helper()
	res, err := http.Get(in.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", series, err)
			}
			return f
		}
	}
	return 0
}
