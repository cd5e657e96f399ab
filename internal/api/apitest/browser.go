package apitest

import (
	"os/exec"
	"testing"
)

// Chromium finds the browser of the real-browser tests; they never skip for want of it: CI
// installs it, and so does `make test` where it can.
func Chromium(tb testing.TB) string {
	tb.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	tb.Fatal("no chromium: run `make test` (it installs it) or `apt-get install chromium`")
	return ""
}
