package main

import (
	"runtime/debug"
	"strconv"
)

// memoryLimitEnv is the container's memory limit in bytes, as Kubernetes's downward API gives
// it (resourceFieldRef limits.memory). A variable of the process, as GOGC and GOMEMLIMIT are,
// and no flag: it describes where the process runs, not what the service does.
const memoryLimitEnv = "ORDERD_MEMORY_LIMIT"

// setMemoryLimit sets Go's soft memory limit to nine tenths of ORDERD_MEMORY_LIMIT, unless it
// is unset or GOMEMLIMIT is set. GOMEMLIMIT cannot say "90% of the limit" itself, and at 100%
// the collector would only work hard once the kernel is about to kill the process: the tenth
// left is for what Go does not count (the binary's pages, the kernel's socket buffers).
func setMemoryLimit(getenv func(string) string) error {
	v := getenv(memoryLimitEnv)
	if v == "" || getenv("GOMEMLIMIT") != "" {
		return nil
	}
	limit, err := strconv.ParseInt(v, 10, 64)
	if err != nil || limit <= 0 {
		return usageErrorf("serve: %s must be a number of bytes, not %q", memoryLimitEnv, v)
	}
	debug.SetMemoryLimit(limit / 10 * 9)
	return nil
}
