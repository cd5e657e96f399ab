// Package orderd holds the contract of the Store Order Service: openapi.yaml, embedded byte
// for byte, so that the service validates requests against, and serves, the very document
// that gen/ is generated from.
package orderd

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
)

// OpenAPI is openapi.yaml as it is in the repository.
//
//go:embed openapi.yaml
var OpenAPI []byte

// LoadOpenAPI parses and validates the embedded document. Each call returns a new copy,
// which the caller may change.
func LoadOpenAPI() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	return doc, nil
}
