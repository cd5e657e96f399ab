package main

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
)

// check applies the rule to one document: every breaking change (oasdiff's level ERR) since
// its release is listed in the changelog, and comes with a greater info.version.
func check(w io.Writer, oasdiff, changelogPath string, listed []string, p pair) bool {
	fail := func(format string, args ...any) bool {
		fmt.Fprintf(w, "FAIL %s: "+format+"\n", append([]any{p.current}, args...)...)
		return false
	}
	was, err := infoVersion(p.released)
	if err != nil {
		return fail("%v", err)
	}
	now, err := infoVersion(p.current)
	if err != nil {
		return fail("%v", err)
	}
	found, err := breakingChanges(oasdiff, p.released, p.current)
	if err != nil {
		return fail("%v", err)
	}
	doc := filepath.Base(p.current)
	var breaking, unlisted []finding
	for _, f := range found {
		switch {
		case f.Level < levelErr:
			fmt.Fprintf(w, "note %s: %s (%s, %s %s)\n", doc, f.Text, f.ID, f.Operation, f.Path)
		case len(missing(listed, doc, f)) > 0:
			unlisted = append(unlisted, f)
			fallthrough
		default:
			breaking = append(breaking, f)
		}
	}
	ok := true
	if len(breaking) > 0 && !was.less(now) {
		ok = fail("%d breaking changes since %s %s, and info.version is still %s: raise it", len(breaking), p.released, was, now)
	}
	if len(unlisted) > 0 {
		ok = fail("%d of %d breaking changes since %s are not in %s's [Unreleased] ### Breaking:", len(unlisted), len(breaking), p.released, changelogPath)
		for _, line := range summarize(unlisted, listed, doc) {
			fmt.Fprintln(w, "  "+line)
		}
		fmt.Fprintf(w, "  list each as a bullet that names `%s`, the id and the words above in backticks (docs/api-evolution.md)\n", doc)
	}
	if ok {
		fmt.Fprintf(w, "ok   %s %s → %s: %d breaking changes since %s, each listed in %s\n", doc, was, now, len(breaking), p.released, changelogPath)
	}
	return ok
}

// summarize says, once for each id and the words its bullet lacks, what the changelog must
// name, with one of the changes as an example and how many there are.
func summarize(unlisted []finding, listed []string, doc string) []string {
	type group struct {
		example finding
		n       int
	}
	groups := map[string]*group{}
	for _, f := range unlisted {
		key := "`" + f.ID + "` lacks " + strings.Join(missing(listed, doc, f), " ")
		if groups[key] == nil {
			groups[key] = &group{example: f}
		}
		groups[key].n++
	}
	var lines []string
	for key, g := range groups {
		lines = append(lines, fmt.Sprintf("%s (%d changes; e.g. %s %s: %s)", key, g.n, g.example.Operation, g.example.Path, g.example.Text))
	}
	sort.Strings(lines)
	return lines
}
