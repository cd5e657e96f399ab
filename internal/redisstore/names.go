package redisstore

import (
	"fmt"
	"regexp"

	"github.com/petstore/orderd/internal/order"
)

// names are the Redis keys of one deployment. The part in braces is the hash tag: keys that a
// script touches together share it, so that they live in one Cluster slot.
type names struct {
	prefix                                  string
	ordersData, ordersStatus, ordersVersion string
	petsData                                string
	keysByHash, keysByName, keysVersion     string
	// ordersGeneration and keysGeneration name the data set that their version counts in:
	// see version.go.
	ordersGeneration, keysGeneration string
	// ordersIDs and ordersByStatus are the indexes of the orders that Find reads: see
	// index.go.
	ordersIDs      string
	ordersByStatus map[order.Status]string
	// pageTokenSecret is the deployment's page-token secret: see secrets.go.
	pageTokenSecret string
}

// validPrefix keeps key names free of braces, spaces and anything a client could inject.
var validPrefix = regexp.MustCompile(`^[A-Za-z0-9_:.-]{1,64}$`)

// DefaultPrefix starts every key of the service.
const DefaultPrefix = "orderd"

// checkPrefix refuses a prefix that could not start every key of the service safely.
func checkPrefix(prefix string) error {
	if !validPrefix.MatchString(prefix) {
		return fmt.Errorf("redis key prefix %q: want 1 to 64 of A-Z a-z 0-9 _ : . -", prefix)
	}
	return nil
}

func newNames(prefix string) (names, error) {
	if err := checkPrefix(prefix); err != nil {
		return names{}, err
	}
	orders, pets, keys := "{"+prefix+":orders}", "{"+prefix+":pets}", "{"+prefix+":keys}"
	return names{
		prefix:           prefix,
		ordersData:       orders + ":data",
		ordersStatus:     orders + ":status",
		ordersVersion:    orders + ":version",
		ordersGeneration: orders + ":generation",
		ordersIDs:        orders + ":ids",
		ordersByStatus: map[order.Status]string{
			order.StatusPending:   orders + ":by-status:pending",
			order.StatusShipped:   orders + ":by-status:shipped",
			order.StatusCancelled: orders + ":by-status:cancelled",
		},
		petsData:       pets + ":data",
		keysByHash:     keys + ":by-hash",
		keysByName:     keys + ":by-name",
		keysVersion:    keys + ":version",
		keysGeneration: keys + ":generation",
		// Read and made alone, never with another key: its own tag, its own slot.
		pageTokenSecret: "{" + prefix + ":settings}:page-token-secret",
	}, nil
}

// statusSets are the three states' index sets in the order import.lua and reindex.lua take
// them as their last keys: pending, shipped, cancelled.
func (n names) statusSets() []string {
	return []string{n.ordersByStatus[order.StatusPending], n.ordersByStatus[order.StatusShipped], n.ordersByStatus[order.StatusCancelled]}
}
