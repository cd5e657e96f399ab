package service

import (
	"github.com/petstore/orderd/internal/jsonfile"
	"github.com/petstore/orderd/internal/order"
)

// ReadOrders reads a data file of orders: a JSON array of the API's Order, with status. Each
// record is decoded as order.Order's UnmarshalJSON has it (every field of the contract's
// Order, none null) and checked by order.CheckEach; the first refused one is reported with its
// file:line:column.
func ReadOrders(path string) ([]order.Order, error) {
	return jsonfile.ReadArray(path, order.CheckEach[order.Order]())
}

// ReadPets reads a data file of pets, as ReadOrders does orders.
func ReadPets(path string) ([]order.Pet, error) {
	return jsonfile.ReadArray(path, order.CheckEach[order.Pet]())
}
