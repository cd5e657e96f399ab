package redisstore

import (
	"fmt"
	"regexp"
)

// names are the Redis keys of one deployment (docs/redis-layout.md, hash tags in braces).
type names struct {
	prefix                                  string
	ordersData, ordersStatus, ordersVersion string
	petsData                                string
	keysByHash, keysByName, keysVersion     string
	ordersGeneration, keysGeneration        string
	ordersEvents                            string
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
		ordersEvents:     orders + ":events",
		petsData:         pets + ":data",
		keysByHash:       keys + ":by-hash",
		keysByName:       keys + ":by-name",
		keysVersion:      keys + ":version",
		keysGeneration:   keys + ":generation",
		pageTokenSecret:  "{" + prefix + ":settings}:page-token-secret",
		webhookIDs:       "{" + prefix + ":webhooks}:ids",
	}, nil
}

// webhook is an endpoint's hash, in its ids' slot; ids hold no brace.
func (n names) webhook(id string) string { return "{" + n.prefix + ":webhooks}:endpoint:" + id }

// rateLimit is caller's hash; caller ids hold no brace.
func (n names) rateLimit(caller string) string { return "{" + n.prefix + ":rl:" + caller + "}" }
