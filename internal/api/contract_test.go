package api

import (
	"slices"
	"strconv"
	"testing"

	"github.com/petstore/orderd"
)

// TestContractBasesAreTheHandlers: New registers each version under BasePath and BasePathV2,
// and the contract (admit, the labels, the validators) knows them from orderd.Versions.
func TestContractBasesAreTheHandlers(t *testing.T) {
	var bases []string
	for _, v := range orderd.Versions {
		bases = append(bases, v.Base)
	}
	if want := []string{BasePath, BasePathV2}; !slices.Equal(bases, want) {
		t.Fatalf("orderd.Versions serves %v, the handler %v", bases, want)
	}
}

// TestValidatorsWhereTheContractDeclaresInput: every operation with a parameter is validated
// (listOrders for its If-None-Match header), and only the one without any is not.
func TestValidatorsWhereTheContractDeclaresInput(t *testing.T) {
	ops, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	for op, want := range map[string]bool{"GET /v1/store/orders": true, "DELETE /v1/store/orders/:orderId": true,
		"GET /v1/pets/:petId": true, "GET /v1/openapi.yaml": false} {
		if got := ops[op].validate != nil; got != want {
			t.Errorf("%s: validated %v, want %v", op, got, want)
		}
	}
}

// TestPassedIsBounded: the inputs validation passed are at most maxPassed.
func TestPassedIsBounded(t *testing.T) {
	p := passed{inputs: map[string]struct{}{}}
	for i := range maxPassed + 10 {
		p.add([]byte(strconv.Itoa(i)))
		if len(p.inputs) > maxPassed {
			t.Fatalf("%d inputs held", len(p.inputs))
		}
	}
	if !p.has([]byte(strconv.Itoa(maxPassed + 9))) {
		t.Fatal("the input added last is not held")
	}
}
