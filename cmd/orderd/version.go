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
	c, modified := commit, false
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision" && c == "":
				c = s.Value
			case s.Key == "vcs.modified" && s.Value == "true":
				modified = true
			}
		}
	}
	if c == "" {
		c = "unknown"
	} else if modified && commit == "" {
		c += " (modified)"
	}
	fmt.Fprintf(w, "orderd %s (commit %s, %s)\n", buildVersion(), c, runtime.Version())
}

// buildVersion is the stamped version, else the build's record, else "(devel)".
func buildVersion() string {
	v := version
	if info, ok := debug.ReadBuildInfo(); ok {
		v = cmp.Or(v, info.Main.Version)
	}
	return cmp.Or(v, "(devel)")
}
