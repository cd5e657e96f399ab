// Package gen holds the code oapi-codegen generates from openapi.yaml: the models and the echo
// strict server. Never edit it by hand; run `make generate`.
package gen

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config config.yaml ../openapi.yaml
