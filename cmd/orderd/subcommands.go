package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// subcommand finds the subcommand args[0] of `orderd group` among synopses ("orderd group
// NAME …", in the order of group --help) and returns its index; --help prints them all.
func subcommand(group string, synopses []string, args []string, stdout io.Writer) (int, error) {
	var names []string
	for _, s := range synopses {
		names = append(names, strings.Fields(s)[2])
	}
	want := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	if len(args) == 0 {
		return 0, usageErrorf("%s: want %s (orderd %s --help)", group, want, group)
	}
	if slices.Contains([]string{"-h", "-help", "--help", "help"}, args[0]) {
		fmt.Fprintf(stdout, "Usage: orderd %s %s [flags]\n\n  %s\n\norderd %s SUBCOMMAND --help lists the flags of each.\n",
			group, strings.Join(names, "|"), strings.Join(synopses, "\n  "), group)
		return 0, flag.ErrHelp
	}
	i := slices.Index(names, args[0])
	if i < 0 {
		return 0, usageErrorf("%s: unknown subcommand %q (want %s)", group, args[0], want)
	}
	return i, nil
}
