package apitest

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// Metric reads one series (`name{labels}` as written) from baseURL's /metrics: 0 when absent.
func Metric(tb testing.TB, baseURL, series string) float64 {
	tb.Helper()
	res, err := http.Get(baseURL + "/metrics")
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				tb.Fatalf("%s: %v", series, err)
			}
			return f
		}
	}
	return 0
}
