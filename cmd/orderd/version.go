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
	v, c, modified := version, commit, false
	if info, ok := debug.ReadBuildInfo(); ok {
		v = cmp.Or(v, info.Main.Version)
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
	fmt.Fprintf(w, "orderd %s (commit %s, %s)\n", cmp.Or(v, "(devel)"), c, runtime.Version())
}
