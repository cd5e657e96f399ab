package main

import "runtime/debug"

// setMemoryLimit sets Go's soft memory limit to nine tenths of limit, the container's memory
// limit in bytes (Kubernetes gives it through the downward API), unless limit is 0 or
// GOMEMLIMIT is set. GOMEMLIMIT cannot say "90% of the limit" itself, and at 100% the
// collector would only work hard once the kernel is about to kill the process: the tenth
// left is for what Go does not count (the binary's pages, the kernel's socket buffers).
func setMemoryLimit(limit int64, getenv func(string) string) {
	if limit > 0 && getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit / 10 * 9)
	}
}
