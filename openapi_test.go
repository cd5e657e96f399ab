package orderd_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/petstore/orderd"
)

func TestOpenAPIIsValid(t *testing.T) {
	doc, err := orderd.Versions[0].Load()
	if err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.0.3" || doc.Info.Version != "1.1.0" {
		t.Fatalf("openapi %s, version %s", doc.OpenAPI, doc.Info.Version)
	}
	want := map[string]bool{"listOrders": false, "cancelOrder": false, "getPetById": true, "getOpenAPIDocument": false}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			deprecated, ok := want[op.OperationID]
			if !ok {
				t.Errorf("unexpected operation %s", op.OperationID)
			}
			if op.Deprecated != deprecated {
				t.Errorf("%s: deprecated = %v", op.OperationID, op.Deprecated)
			}
			// Only the document itself is public; everything else needs a key.
			public := op.Security != nil && len(*op.Security) == 0
			if public != (op.OperationID == "getOpenAPIDocument") {
				t.Errorf("%s: public = %v", op.OperationID, public)
			}
			delete(want, op.OperationID)
		}
	}
	if len(want) != 0 {
		t.Errorf("missing operations: %v", want)
	}
}

func TestOpenAPIV2IsValid(t *testing.T) {
	doc, err := orderd.Versions[1].Load()
	if err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.0.3" || doc.Info.Version != "2.1.0" || doc.Servers[0].URL != orderd.Versions[1].Base {
		t.Fatalf("openapi %s, version %s, first server %s", doc.OpenAPI, doc.Info.Version, doc.Servers[0].URL)
	}
	want := map[string]bool{"findOrders": true, "getOrder": true, "cancelOrder": true, "listEvents": true, "getOpenAPIDocument": true}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if !want[op.OperationID] {
				t.Errorf("unexpected operation %s", op.OperationID)
			}
			public := op.Security != nil && len(*op.Security) == 0
			if public != (op.OperationID == "getOpenAPIDocument") {
				t.Errorf("%s: public = %v", op.OperationID, public)
			}
			delete(want, op.OperationID)
		}
	}
	if len(want) != 0 {
		t.Errorf("missing operations: %v", want)
	}
}

// TestVersionsShareTheirCommonComponents: each document stands alone, so what both versions
// have (the Order, the Error and its codes, the shared headers, responses and examples) is
// written in each; it must say the same in both, so that a rule is stated once in substance.
func TestVersionsShareTheirCommonComponents(t *testing.T) {
	v1, err := orderd.Versions[0].Load()
	if err != nil {
		t.Fatal(err)
	}
	v2, err := orderd.Versions[1].Load()
	if err != nil {
		t.Fatal(err)
	}
	same := func(kind, name string, a, b any) {
		t.Helper()
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Errorf("%s %s differs between the versions:\nv1 %s\nv2 %s", kind, name, ja, jb)
		}
	}
	shared := 0
	for name, s := range v2.Components.Schemas {
		if s1, ok := v1.Components.Schemas[name]; ok {
			same("schema", name, s1, s)
			shared++
		}
	}
	for name, h := range v2.Components.Headers {
		if h1, ok := v1.Components.Headers[name]; ok {
			same("header", name, h1, h)
			shared++
		}
	}
	for name, r := range v2.Components.Responses {
		if r1, ok := v1.Components.Responses[name]; ok {
			same("response", name, r1, r)
			shared++
		}
	}
	for name, e := range v2.Components.Examples {
		if e1, ok := v1.Components.Examples[name]; ok {
			same("example", name, e1, e)
			shared++
		}
	}
	same("security scheme", "bearerAuth", v1.Components.SecuritySchemes["bearerAuth"], v2.Components.SecuritySchemes["bearerAuth"])
	if shared < 30 {
		t.Errorf("only %d components in common: the versions should share Order, Error and the common headers, responses and examples", shared)
	}
}
