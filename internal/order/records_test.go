package order_test

import (
	"strings"
	"testing"

	"github.com/petstore/orderd/internal/order"
)

func TestValidateAll(t *testing.T) {
	for _, tc := range []struct {
		name   string
		orders []order.Order
		want   string
	}{
		{"Empty", nil, ""},
		{"OK", []order.Order{{ID: 2, Status: order.StatusPending}, {ID: 1, Status: order.StatusShipped}}, ""},
		{"Invalid", []order.Order{{ID: 1, Status: order.StatusPending}, {ID: 2, Status: "lost"}}, `order 2: status "lost" is not pending, shipped or cancelled`},
		{"Duplicate", []order.Order{{ID: 1, Status: order.StatusPending}, {ID: 1, Status: order.StatusShipped}}, "order 1: duplicate id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := order.ValidateAll(tc.orders)
			if got := errString(err); got != tc.want {
				t.Fatalf("ValidateAll = %q, want %q", got, tc.want)
			}
		})
	}
	pets := []order.Pet{{ID: 7, Status: order.PetSold}, {ID: 7, Status: order.PetAvailable}}
	if got := errString(order.ValidateAll(pets)); got != "pet 7: duplicate id" {
		t.Fatalf("pets: %q", got)
	}
	// The contract's maxLength of a pet's name counts characters, not bytes.
	longest := strings.Repeat("é", order.MaxPetNameLength)
	if err := (order.Pet{ID: 1, Name: longest, Status: order.PetSold}).Validate(); err != nil {
		t.Fatalf("a name of %d characters (%d bytes): %v", order.MaxPetNameLength, len(longest), err)
	}
	tooLong := order.Pet{ID: 1, Name: longest + "x", Status: order.PetSold}
	if got := errString(tooLong.Validate()); got != "pet 1: name is 201 characters, more than 200" {
		t.Fatalf("a name one character too long: %q", got)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
