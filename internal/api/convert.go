package api

import (
	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/order"
)

// toAPIPet converts a domain pet to the generated type; the schema requires every field.
func toAPIPet(p order.Pet) gen.Pet {
	return gen.Pet{Id: p.ID, Name: p.Name, Status: gen.PetStatus(p.Status)}
}
