package order

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"
)

// PetStatus is the availability of a pet.
type PetStatus string

// The availabilities of a pet.
const (
	PetAvailable PetStatus = "available"
	PetPending   PetStatus = "pending"
	PetSold      PetStatus = "sold"
)

// Pet is an animal of the store. It is served only by the deprecated pets operation.
type Pet struct {
	ID     int64     `json:"id"`
	Name   string    `json:"name"`
	Status PetStatus `json:"status"`
}

// MaxPetNameLength is the maxLength, in characters, of Pet.name in openapi.yaml.
const MaxPetNameLength = 200

// Validate reports the first way in which p is not a pet the service can hold.
func (p Pet) Validate() error {
	switch {
	case p.ID < 0:
		return fmt.Errorf("pet %d: id: must not be negative", p.ID)
	case utf8.RuneCountInString(p.Name) > MaxPetNameLength:
		return fmt.Errorf("pet %d: name: %d characters, more than %d", p.ID, utf8.RuneCountInString(p.Name), MaxPetNameLength)
	case p.Status != PetAvailable && p.Status != PetPending && p.Status != PetSold:
		return fmt.Errorf("pet %d: status: %q is not available, pending or sold", p.ID, p.Status)
	}
	return nil
}

// ErrPetNotFound is returned by PetStore.Pet for an unknown id.
var ErrPetNotFound = errors.New("no such pet")

// PetStore keeps the pets. Implementations are safe for concurrent use.
type PetStore interface {
	// Pet returns the pet with the given id, or ErrPetNotFound.
	Pet(ctx context.Context, id int64) (Pet, error)
}
