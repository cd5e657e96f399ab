package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// oasdiffBin is the real oasdiff, built once from tools/oasdiff.mod as `make api-diff` builds it.
var oasdiffBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "apidiff")
	if err != nil {
		panic(err)
	}
	oasdiffBin = filepath.Join(dir, "oasdiff")
	build := exec.Command("go", "build", "-modfile=tools/oasdiff.mod", "-o", oasdiffBin, "github.com/oasdiff/oasdiff")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building oasdiff: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestTheRepositoryPasses runs the check as CI does, on the repository's own documents, copies
// and changelog.
func TestTheRepositoryPasses(t *testing.T) {
	pairs, err := releasedCopies("../../api/released", "../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 2 {
		t.Errorf("released copies %v: want one of openapi.yaml and one of openapi-v2.yaml", pairs)
	}
	var out bytes.Buffer
	if !run(&out, oasdiffBin, "../../CHANGELOG.md", pairs) {
		t.Errorf("the repository fails its own check:\n%s", &out)
	}
}

// broken is openapi.yaml (1.1.0) as released, and a copy of it as the current document with two
// breaking changes: a value added to Order.status and the cancel's path removed.
func broken(t *testing.T, version string) pair {
	t.Helper()
	doc, err := os.ReadFile("../../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	released := filepath.Join(dir, "openapi-1.1.0.yaml")
	write(t, released, string(doc))
	current := string(doc)
	for _, edit := range [][2]string{
		{"\n  version: 1.1.0\n", "\n  version: " + version + "\n"},
		{"enum: [pending, shipped, cancelled]", "enum: [pending, shipped, cancelled, lost]"},
		{"\n  /store/orders/{orderId}:\n", "\n  /store/orders/{orderId}/gone:\n"},
	} {
		if !strings.Contains(current, edit[0]) {
			t.Fatalf("openapi.yaml has no %q to break", edit[0])
		}
		current = strings.Replace(current, edit[0], edit[1], 1)
	}
	path := filepath.Join(dir, "openapi.yaml")
	write(t, path, current)
	return pair{released: released, current: path}
}

func TestABreakingChangeNotInTheChangelogFails(t *testing.T) {
	var out bytes.Buffer
	if run(&out, oasdiffBin, "../../CHANGELOG.md", []pair{broken(t, "1.2.0")}) {
		t.Fatalf("the broken copy passed:\n%s", &out)
	}
	for _, want := range []string{"FAIL", "`response-property-enum-value-added` lacks `lost`", "`api-path-removed-without-deprecation`"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output does not say %q:\n%s", want, &out)
		}
	}
	// The changelog's bullet for Error.code's values must not stand for another enum's.
	if strings.Contains(out.String(), "lacks `events_expired`") {
		t.Errorf("a change of this copy was matched with Error.code's:\n%s", &out)
	}
}

// listing is a changelog whose [Unreleased] lists the broken copy's changes.
const listing = "# Changelog\n\n## [Unreleased]\n\n### Added\n\n- `openapi.yaml` `api-path-removed-without-deprecation` (not here)\n\n" +
	"### Breaking\n\n- `openapi.yaml`, `response-property-enum-value-added`: the `items/status`\n  of an order may be `lost`.\n" +
	"* `openapi.yaml`: `api-path-removed-without-deprecation`, the cancel.\n\n## [1.0.0] - 2026-11-25\n\n### Breaking\n\n- nothing\n"

func TestABreakingChangeInTheChangelogPasses(t *testing.T) {
	changelog := filepath.Join(t.TempDir(), "CHANGELOG.md")
	write(t, changelog, listing)
	var out bytes.Buffer
	if !run(&out, oasdiffBin, changelog, []pair{broken(t, "1.2.0")}) {
		t.Fatalf("the listed changes failed:\n%s", &out)
	}
	// Without the version's rise, the same listed changes fail.
	out.Reset()
	if run(&out, oasdiffBin, changelog, []pair{broken(t, "1.1.0")}) || !strings.Contains(out.String(), "info.version is still 1.1.0") {
		t.Errorf("breaking changes under the released info.version passed:\n%s", &out)
	}
}

func TestAFailureToCompareFails(t *testing.T) {
	p := broken(t, "1.2.0")
	p.released += ".missing"
	var out bytes.Buffer
	if run(&out, oasdiffBin, "../../CHANGELOG.md", []pair{p}) {
		t.Errorf("a missing released copy passed:\n%s", &out)
	}
}

func TestBreakingBullets(t *testing.T) {
	got := breakingBullets(listing)
	want := []string{
		"`openapi.yaml`, `response-property-enum-value-added`: the `items/status` of an order may be `lost`.",
		"`openapi.yaml`: `api-path-removed-without-deprecation`, the cancel.",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("breakingBullets = %q, want %q", got, want)
	}
}

func TestMissing(t *testing.T) {
	f := finding{ID: "response-property-enum-value-added", Text: "added the new `lost` enum value to the `status` response property for the response status `200`"}
	for _, c := range []struct {
		bullets []string
		doc     string
		want    string
	}{
		{[]string{"`openapi.yaml` `response-property-enum-value-added` `status` `lost`"}, "openapi.yaml", "[]"},
		{[]string{"`openapi.yaml` `response-property-enum-value-added` `status` `lost`"}, "openapi-v2.yaml", "[`openapi-v2.yaml` `response-property-enum-value-added` `lost` `status`]"},
		{[]string{"`openapi.yaml` `response-property-enum-value-added` `status`", "`lost`"}, "openapi.yaml", "[`lost`]"},
		{nil, "openapi.yaml", "[`openapi.yaml` `response-property-enum-value-added` `lost` `status`]"},
	} {
		if got := fmt.Sprint(missing(c.bullets, c.doc, f)); got != c.want {
			t.Errorf("missing(%q, %s) = %s, want %s", c.bullets, c.doc, got, c.want)
		}
	}
}

func TestReleasedCopies(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "openapi-1.0.0.yaml"), "")
	write(t, filepath.Join(dir, "openapi-v2-2.0.0.yaml"), "")
	pairs, err := releasedCopies(dir, "root")
	if err != nil || fmt.Sprint(pairs) != fmt.Sprintf("[{%s root/openapi.yaml} {%s root/openapi-v2.yaml}]",
		filepath.Join(dir, "openapi-1.0.0.yaml"), filepath.Join(dir, "openapi-v2-2.0.0.yaml")) {
		t.Errorf("releasedCopies = %v, %v", pairs, err)
	}
	write(t, filepath.Join(dir, "openapi-1.1.0.yaml"), "")
	if _, err := releasedCopies(dir, "root"); err == nil || !strings.Contains(err.Error(), "same document") {
		t.Errorf("two copies of openapi.yaml: %v", err)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
