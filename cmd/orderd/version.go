package main

import (
	"cmp"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version and commit are stamped by `make build` (-ldflags -X); without them, the build's
// own record answers.
var version, commit string

// printVersion runs `orderd version`: the version, the commit and the Go version, one line.
func printVersion(w io.Writer) {
	c := commit
	if info, ok := debug.ReadBuildInfo(); ok && c == "" {
		settings := map[string]string{}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		if c = settings["vcs.revision"]; c != "" && settings["vcs.modified"] == "true" {
			c += " (modified)"
		}
	}
	fmt.Fprintf(w, "orderd %s (commit %s, %s)\n", buildVersion(), cmp.Or(c, "unknown"), runtime.Version())
}

// buildVersion is the stamped version, else the build's record, else "(devel)".
func buildVersion() string {
	v := version
	if info, ok := debug.ReadBuildInfo(); ok {
		v = cmp.Or(v, info.Main.Version)
	}
	return cmp.Or(v, "(devel)")
}
