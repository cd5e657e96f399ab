// Package genv2 holds the code oapi-codegen generates from openapi-v2.yaml, version 2 of the
// contract: the models and the echo strict server. Never edit it by hand; run `make generate`.
package genv2

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config config.yaml ../openapi-v2.yaml
