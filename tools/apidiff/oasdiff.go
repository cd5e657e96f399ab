package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// finding is one change of oasdiff's JSON output.
type finding struct {
	ID        string `json:"id"`
	Text      string `json:"text"`
	Level     int    `json:"level"`
	Operation string `json:"operation"`
	Path      string `json:"path"`
}

// levelErr is oasdiff's level of a breaking change (ERR); 2 is WARN, 1 INFO.
const levelErr = 3

// breakingChanges runs `oasdiff breaking --fail-on ERR` of released against current. Its exit
// status 1 says that there are changes of level ERR; any other but 0 is a failure to compare.
func breakingChanges(oasdiff, released, current string) ([]finding, error) {
	cmd := exec.Command(oasdiff, "breaking", "--fail-on", "ERR", "--format", "json", released, current)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		return nil, fmt.Errorf("%s: %v: %s", strings.Join(cmd.Args, " "), err, strings.TrimSpace(stderr.String()))
	}
	var found []finding
	if err := json.Unmarshal(stdout.Bytes(), &found); err != nil {
		return nil, fmt.Errorf("oasdiff's output: %v", err)
	}
	return found, nil
}
