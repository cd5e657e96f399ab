package api

import (
	"slices"
	"testing"
)

// TestContractBasesAreTheHandlers: New registers each version under BasePath and BasePathV2,
// and the contract (admit, the labels, the validators) knows them from orderd.Versions.
func TestContractBasesAreTheHandlers(t *testing.T) {
	ct, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{BasePath, BasePathV2}; !slices.Equal(ct.bases, want) {
		t.Fatalf("orderd.Versions serves %v, the handler %v", ct.bases, want)
	}
}

// TestValidatorsWhereTheContractDeclaresInput: every operation with a parameter is validated
// (listOrders for its If-None-Match header), and only the one without any is not.
func TestValidatorsWhereTheContractDeclaresInput(t *testing.T) {
	ct, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	for op, want := range map[string]bool{"listOrders": true, "cancelOrder": true, "getPetById": true, "getOpenAPIDocument": false} {
		if got := len(ct.validators[BasePath][op]) > 0; got != want {
			t.Errorf("%s: validated %v, want %v", op, got, want)
		}
	}
}
