// Command apidiff is `make api-diff`: it runs oasdiff's breaking check of each API document
// against its copy as last released, and fails on a breaking change that CHANGELOG.md does not
// list. The rule it implements is docs/api-evolution.md's.
//
//	apidiff -oasdiff bin/oasdiff -changelog CHANGELOG.md [RELEASED=CURRENT...]
//
// Without arguments it compares each api/released/NAME-X.Y.Z.yaml with NAME.yaml.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

func main() {
	oasdiff := flag.String("oasdiff", "bin/oasdiff", "the oasdiff binary (make api-diff builds it from tools/oasdiff.mod)")
	changelog := flag.String("changelog", "CHANGELOG.md", "the changelog whose [Unreleased] section lists the breaking changes")
	released := flag.String("released", "api/released", "without arguments: the directory of the released copies, NAME-X.Y.Z.yaml of NAME.yaml")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: apidiff [flags] [RELEASED=CURRENT...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	var pairs []pair
	if flag.NArg() == 0 {
		var err error
		if pairs, err = releasedCopies(*released, "."); err != nil {
			fmt.Fprintf(os.Stderr, "apidiff: %v\n", err)
			os.Exit(2)
		}
	}
	for _, arg := range flag.Args() {
		base, current, ok := strings.Cut(arg, "=")
		if !ok || base == "" || current == "" {
			fmt.Fprintf(os.Stderr, "apidiff: %q is not RELEASED=CURRENT\n", arg)
			os.Exit(2)
		}
		pairs = append(pairs, pair{released: base, current: current})
	}
	if !run(os.Stdout, *oasdiff, *changelog, pairs) {
		os.Exit(1)
	}
}

// copyName is a released copy's file name: the document's name, then its version.
var copyName = regexp.MustCompile(`^(.+)-[0-9]+\.[0-9]+\.[0-9]+\.yaml$`)

// releasedCopies pairs each copy in dir with its document in root: one copy for each, the last
// released, since a change is listed in the changelog only until it is released.
func releasedCopies(dir, root string) ([]pair, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var pairs []pair
	seen := map[string]string{}
	for _, e := range entries {
		m := copyName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("%s: %s is not NAME-X.Y.Z.yaml", dir, e.Name())
		}
		if other, ok := seen[m[1]]; ok {
			return nil, fmt.Errorf("%s: %s and %s are copies of the same document: keep the last released only", dir, other, e.Name())
		}
		seen[m[1]] = e.Name()
		pairs = append(pairs, pair{released: filepath.Join(dir, e.Name()), current: filepath.Join(root, m[1]+".yaml")})
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("%s: no released copy", dir)
	}
	return pairs, nil
}

// pair is a document as last released and the same document now.
type pair struct{ released, current string }

// run checks every pair, says what it found on w, and reports whether all of them pass.
func run(w io.Writer, oasdiff, changelogPath string, pairs []pair) bool {
	text, err := os.ReadFile(changelogPath)
	if err != nil {
		fmt.Fprintf(w, "apidiff: %v\n", err)
		return false
	}
	listed := breakingBullets(string(text))
	ok := true
	for _, p := range pairs {
		ok = check(w, oasdiff, changelogPath, listed, p) && ok
	}
	return ok
}
