package order_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

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
		{"Invalid", []order.Order{{ID: 1, Status: order.StatusPending}, {ID: 2, Status: "lost"}}, `order 2: status: "lost" is not pending, shipped or cancelled`},
		{"Negative id", []order.Order{{ID: -2, Status: order.StatusPending}}, "order -2: id: must not be negative"},
		{"Negative petId", []order.Order{{ID: 2, PetID: -1, Status: order.StatusPending}}, "order 2: petId: must not be negative, got -1"},
		{"Negative quantity", []order.Order{{ID: 2, Quantity: -1, Status: order.StatusPending}}, "order 2: quantity: must not be negative, got -1"},
		// The service sends shipDate in UTC: an offset can move a date of year 9999 out of RFC 3339.
		{"Year 10000 in UTC", []order.Order{{ID: 2, ShipDate: time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("", -2*3600)), Status: order.StatusPending}},
			"order 2: shipDate: 9999-12-31T23:00:00-02:00 is outside the years 0000 to 9999 in UTC"},
		{"Year -1 in UTC", []order.Order{{ID: 2, ShipDate: time.Date(0, 1, 1, 0, 30, 0, 0, time.FixedZone("", 3600)), Status: order.StatusPending}},
			"order 2: shipDate: 0000-01-01T00:30:00+01:00 is outside the years 0000 to 9999 in UTC"},
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
	for p, want := range map[order.Pet]string{
		{ID: -7, Status: order.PetSold}: "pet -7: id: must not be negative",
		{ID: 7, Status: "lost"}:         `pet 7: status: "lost" is not available, pending or sold`,
	} {
		if got := errString(order.ValidateAll([]order.Pet{p})); got != want {
			t.Fatalf("%+v: %q, want %q", p, got, want)
		}
	}
	// The contract's maxLength of a pet's name counts characters, not bytes.
	longest := strings.Repeat("é", order.MaxPetNameLength)
	if err := (order.Pet{ID: 1, Name: longest, Status: order.PetSold}).Validate(); err != nil {
		t.Fatalf("a name of %d characters (%d bytes): %v", order.MaxPetNameLength, len(longest), err)
	}
	tooLong := order.Pet{ID: 1, Name: longest + "x", Status: order.PetSold}
	if got := errString(tooLong.Validate()); got != "pet 1: name: 201 characters, more than 200" {
		t.Fatalf("a name one character too long: %q", got)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestSlice: a list's batches, each record checked before its batch is handed out.
func TestSlice(t *testing.T) {
	list := []order.Order{{ID: 1}, {ID: 2}, {ID: 3}, {ID: 4}, {ID: 5}}
	var checked []int64
	var sizes []int
	err := order.Slice(list, 2)(func(o order.Order) error {
		checked = append(checked, o.ID)
		if o.ID == 5 {
			return errors.New("five")
		}
		return nil
	}, func(b []order.Order) error {
		if int64(len(checked)) != b[len(b)-1].ID {
			t.Errorf("batch %v handed out after checking %v", b, checked)
		}
		sizes = append(sizes, len(b))
		return nil
	})
	if err == nil || err.Error() != "five" || !slices.Equal(sizes, []int{2, 2}) || len(checked) != 5 {
		t.Fatalf("err %v, batches of %v, checked %v", err, sizes, checked)
	}
}

// TestReadAhead: the batches in order, the reader's error, and each's error stopping the reader.
func TestReadAhead(t *testing.T) {
	list := make([]order.Order, 100)
	for i := range list {
		list[i].ID = int64(i)
	}
	var got []int64
	check := func(o order.Order) error {
		if o.ID == 95 {
			return errors.New("95")
		}
		return nil
	}
	err := order.ReadAhead(order.Slice(list, 10), 2)(check, func(b []order.Order) error {
		for _, o := range b {
			got = append(got, o.ID)
		}
		return nil
	})
	if err == nil || err.Error() != "95" || len(got) != 90 || got[89] != 89 {
		t.Fatalf("err %v, %d records handed out", err, len(got))
	}
	read := 0
	err = order.ReadAhead(order.Slice(list, 10), 2)(func(order.Order) error { read++; return nil }, func(b []order.Order) error {
		if b[0].ID == 20 {
			return errors.New("full")
		}
		return nil
	})
	// Read: the 3 batches handed out, 2 waiting, 1 sent as each failed, 1 more checked.
	if err == nil || err.Error() != "full" || read > 70 {
		t.Fatalf("err %v after %d records read", err, read)
	}
}
