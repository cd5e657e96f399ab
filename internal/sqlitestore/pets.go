package sqlitestore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/petstore/orderd/internal/order"
)

var _ order.PetStore = (*Pets)(nil)

// Pets is an order.PetStore in the pets table.
type Pets struct{ db *DB }

// NewPets returns the pet store of db.
func NewPets(db *DB) *Pets { return &Pets{db: db} }

// Pet reads one pet.
func (s *Pets) Pet(ctx context.Context, id int64) (order.Pet, error) {
	readCtx, err := pointRead(ctx)
	if err != nil {
		return order.Pet{}, err
	}
	p := order.Pet{ID: id}
	var status string
	err = s.db.stmts.selectPet.QueryRowContext(readCtx, id).Scan(&p.Name, &status)
	if errors.Is(err, sql.ErrNoRows) {
		return order.Pet{}, order.ErrPetNotFound
	}
	if err != nil {
		return order.Pet{}, s.db.fail(ctx, err)
	}
	p.Status = order.PetStatus(status)
	if err := p.Validate(); err != nil {
		return order.Pet{}, corrupt("%w", err)
	}
	return p, nil
}
