//go:build tools

// Package tools pins the tools the Makefile runs with `go run`, so that every machine uses
// the versions in go.mod: the code generator, staticcheck (make lint) and govulncheck
// (make vulncheck, for machines that can reach the vulnerability database).
package tools

import (
	_ "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen"
	_ "golang.org/x/vuln/cmd/govulncheck"
	_ "honnef.co/go/tools/cmd/staticcheck"
)
