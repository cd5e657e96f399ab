package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/order"
)

var _ order.PetStore = (*Pets)(nil)

// Pets is an order.PetStore in Redis: one hash of pets by id.
type Pets struct{ conn }

// NewPets returns the store of the deployment whose keys start with prefix.
func NewPets(rdb redis.UniversalClient, prefix string, timeout time.Duration) (*Pets, error) {
	c, err := newConn(rdb, prefix, timeout)
	return &Pets{c}, err
}

type petData struct {
	Name   string          `json:"name"`
	Status order.PetStatus `json:"status"`
}

// Pet reads one pet.
func (s *Pets) Pet(ctx context.Context, id int64) (order.Pet, error) {
	ctx, cancel := callContext(ctx, s.timeout)
	defer cancel()
	raw, err := s.rdb.HGet(ctx, s.k.petsData, strconv.FormatInt(id, 10)).Result()
	if errors.Is(err, redis.Nil) {
		return order.Pet{}, order.ErrPetNotFound
	}
	if err != nil {
		return order.Pet{}, classify(ctx, err)
	}
	var d petData
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		return order.Pet{}, fmt.Errorf("%w: pet %d in redis: %w", order.ErrCorrupt, id, err)
	}
	p := order.Pet{ID: id, Name: d.Name, Status: d.Status}
	if err := p.Validate(); err != nil {
		return order.Pet{}, fmt.Errorf("%w: in redis: %w", order.ErrCorrupt, err)
	}
	return p, nil
}

// ImportBatches writes pets read in batches, replacing those with the same id, each checked as
// it is read (by order.CheckEach): the batch of a refused pet and those after it are not
// written. A batch is one HSET, written whole or not at all.
func (s *Pets) ImportBatches(ctx context.Context, pets order.Batches[order.Pet]) error {
	return pets(order.CheckEach[order.Pet](), func(part []order.Pet) error {
		fields := make([]any, 0, 2*len(part))
		for _, pet := range part {
			data, _ := json.Marshal(petData{pet.Name, pet.Status}) // strings: never fails
			fields = append(fields, strconv.FormatInt(pet.ID, 10), data)
		}
		if len(fields) == 0 {
			return nil
		}
		ctx, cancel := callContext(ctx, s.timeout)
		defer cancel()
		return classify(ctx, s.rdb.HSet(ctx, s.k.petsData, fields...).Err())
	})
}
