package redisstore

import (
	"fmt"
	"regexp"

	"github.com/petstore/orderd/internal/order"
)

// names are the Redis keys of one deployment (docs/redis-layout.md, hash tags in braces).
type names struct {
	prefix                                  string
	ordersData, ordersStatus, ordersVersion string
	petsData                                string
	keysByHash, keysByName, keysVersion     string
	ordersGeneration, keysGeneration        string
	ordersIDs                               string
	ordersEvents                            string
	ordersByStatus                          map[order.Status]string
	pageTokenSecret                         string
	webhookIDs                              string
}

// validPrefix keeps key names free of braces, spaces and anything a client could inject.
var validPrefix = regexp.MustCompile(`^[A-Za-z0-9_:.-]{1,64}$`)

// DefaultPrefix starts every key of the service.
const DefaultPrefix = "orderd"

func newNames(prefix string) (names, error) {
	if !validPrefix.MatchString(prefix) {
		return names{}, fmt.Errorf("redis key prefix %q: want 1 to 64 of A-Z a-z 0-9 _ : . -", prefix)
	}
	orders, pets, keys := "{"+prefix+":orders}", "{"+prefix+":pets}", "{"+prefix+":keys}"
	return names{
		prefix:           prefix,
		ordersData:       orders + ":data",
		ordersStatus:     orders + ":status",
		ordersVersion:    orders + ":version",
		ordersGeneration: orders + ":generation",
		ordersIDs:        orders + ":ids",
		ordersEvents:     orders + ":events",
		ordersByStatus: map[order.Status]string{
			order.StatusPending:   orders + ":by-status:pending",
			order.StatusShipped:   orders + ":by-status:shipped",
			order.StatusCancelled: orders + ":by-status:cancelled",
		},
		petsData:        pets + ":data",
		keysByHash:      keys + ":by-hash",
		keysByName:      keys + ":by-name",
		keysVersion:     keys + ":version",
		keysGeneration:  keys + ":generation",
		pageTokenSecret: "{" + prefix + ":settings}:page-token-secret",
		webhookIDs:      "{" + prefix + ":webhooks}:ids",
	}, nil
}

// webhook and webhookLease are an endpoint's hash and lease, in its ids' slot; ids hold no brace.
func (n names) webhook(id string) string      { return "{" + n.prefix + ":webhooks}:endpoint:" + id }
func (n names) webhookLease(id string) string { return "{" + n.prefix + ":webhooks}:lease:" + id }

// rateLimit is caller's hash; caller ids hold no brace.
func (n names) rateLimit(caller string) string { return "{" + n.prefix + ":rl:" + caller + "}" }

// statusSets are the states' index sets in import.lua's and reindex.lua's order.
func (n names) statusSets() []string {
	return []string{n.ordersByStatus[order.StatusPending], n.ordersByStatus[order.StatusShipped], n.ordersByStatus[order.StatusCancelled]}
}

// member is id in the index sets: zero-padded, so that their bytes sort as the ids.
func member(id int64) string { return fmt.Sprintf("%019d", id) }
