package inmem_test

import (
	"testing"

	"github.com/petstore/orderd/internal/inmem"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
)

func TestOrdersConformance(t *testing.T) {
	ordertest.Run(t, func(tb testing.TB, orders []order.Order) order.Store {
		s, err := inmem.NewOrders(orders)
		if err != nil {
			tb.Fatal(err)
		}
		return s
	})
}

func TestNewOrdersRefusesBadData(t *testing.T) {
	for name, orders := range map[string][]order.Order{
		"duplicate id":   {{ID: 1, Status: order.StatusPending}, {ID: 1, Status: order.StatusShipped}},
		"negative id":    {{ID: -1, Status: order.StatusPending}},
		"unknown status": {{ID: 1, Status: "lost"}},
	} {
		if _, err := inmem.NewOrders(orders); err == nil {
			t.Errorf("%s: NewOrders accepted it", name)
		}
	}
}

func TestPets(t *testing.T) {
	s, err := inmem.NewPets([]order.Pet{{ID: 9223372036854775807, Name: "Rex", Status: order.PetAvailable}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Pet(t.Context(), 9223372036854775807)
	if err != nil || p.Name != "Rex" {
		t.Fatalf("Pet = %+v, %v", p, err)
	}
	if _, err := s.Pet(t.Context(), 1); err != order.ErrPetNotFound {
		t.Fatalf("unknown pet: %v, want ErrPetNotFound", err)
	}
	if _, err := inmem.NewPets([]order.Pet{{ID: 1, Status: "lost"}}); err == nil {
		t.Fatal("NewPets accepted an unknown status")
	}
}
