package service

import (
	"github.com/petstore/orderd/internal/jsonfile"
	"github.com/petstore/orderd/internal/order"
)

// ReadOrders reads a data file of orders: a JSON array of the API's Order, with status. A
// record that order.CheckEach refuses is reported with its file:line:column.
func ReadOrders(path string) ([]order.Order, error) {
	return jsonfile.ReadArray(path, order.CheckEach[order.Order]())
}

// ReadPets reads a data file of pets, as ReadOrders does orders.
func ReadPets(path string) ([]order.Pet, error) {
	return jsonfile.ReadArray(path, order.CheckEach[order.Pet]())
}
