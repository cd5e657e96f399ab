// Package orderd embeds the contract, one OpenAPI document per API version, so that the
// service validates against and serves the very documents gen/ and genv2/ come from.
package orderd

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
)

// OpenAPI is openapi.yaml, version 1 of the contract, as it is in the repository.
//
//go:embed openapi.yaml
var OpenAPI []byte

// OpenAPIV2 is openapi-v2.yaml, version 2 of the contract, as it is in the repository.
//
//go:embed openapi-v2.yaml
var OpenAPIV2 []byte

// Version is one version of the API. Each document stands alone (a client generates from
// one); TestVersionsShareTheirCommonComponents keeps what they have in common equal.
type Version struct {
	Base     string // the path prefix of its operations, "/v1": its document's first server
	Name     string // the document's file name in the repository
	Document []byte
}

// Versions are the versions the service serves, oldest first.
var Versions = []Version{
	{Base: "/v1", Name: "openapi.yaml", Document: OpenAPI},
	{Base: "/v2", Name: "openapi-v2.yaml", Document: OpenAPIV2},
}

// Load parses and validates the document, a new copy that the caller may change.
func (v Version) Load() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(v.Document)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.Name, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("%s: %w", v.Name, err)
	}
	return doc, nil
}
