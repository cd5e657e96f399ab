package orderd_test

import (
	"testing"

	"github.com/petstore/orderd"
)

func TestOpenAPIIsValid(t *testing.T) {
	doc, err := orderd.LoadOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.0.3" || doc.Info.Version != "1.0.0" {
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
