package api

import (
	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/order"
)

// toAPIPet converts a domain pet to the generated type, every field present.
func toAPIPet(p order.Pet) gen.Pet {
	status := gen.PetStatus(p.Status)
	return gen.Pet{Id: &p.ID, Name: &p.Name, Status: &status}
}
