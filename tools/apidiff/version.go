package main

import (
	"fmt"
	"os"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// semver is an info.version, MAJOR.MINOR.PATCH.
type semver [3]int

func (v semver) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

func (v semver) less(w semver) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] < w[i]
		}
	}
	return false
}

var versionPattern = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

// infoVersion reads a document's info.version.
func infoVersion(path string) (semver, error) {
	var v semver
	text, err := os.ReadFile(path)
	if err != nil {
		return v, err
	}
	var doc struct {
		Info struct{ Version string } `yaml:"info"`
	}
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return v, fmt.Errorf("%s: %v", path, err)
	}
	m := versionPattern.FindStringSubmatch(doc.Info.Version)
	if m == nil {
		return v, fmt.Errorf("%s: info.version %q is not MAJOR.MINOR.PATCH", path, doc.Info.Version)
	}
	for i := range v {
		if v[i], err = strconv.Atoi(m[i+1]); err != nil {
			return v, fmt.Errorf("%s: info.version %q: %v", path, doc.Info.Version, err)
		}
	}
	return v, nil
}
