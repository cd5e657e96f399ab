package inmem

import (
	"context"

	"github.com/petstore/orderd/internal/order"
)

var _ order.PetStore = (*Pets)(nil)

// Pets is an order.PetStore in memory. It is read-only after construction, so it needs no lock.
type Pets struct {
	byID map[int64]order.Pet
}

// NewPets returns a store holding pets, which must have distinct, valid ids.
func NewPets(pets []order.Pet) (*Pets, error) {
	if err := order.ValidateAll(pets); err != nil {
		return nil, err
	}
	s := &Pets{byID: make(map[int64]order.Pet, len(pets))}
	for _, p := range pets {
		s.byID[p.ID] = p
	}
	return s, nil
}

// Pet returns the pet with the given id.
func (s *Pets) Pet(_ context.Context, id int64) (order.Pet, error) {
	p, ok := s.byID[id]
	if !ok {
		return order.Pet{}, order.ErrPetNotFound
	}
	return p, nil
}
