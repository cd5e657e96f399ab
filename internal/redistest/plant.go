package redistest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/petstore/orderd/internal/order"
	"github.com/redis/go-redis/v9"
)

// PlantKey writes k's record under prefix as docs/redis-layout.md lets another writer do,
// without the checks of orderd's Add: both hashes, then a new version and generation, so
// that every instance reads it at once.
func PlantKey(tb testing.TB, rdb redis.UniversalClient, prefix string, k order.Key) {
	tb.Helper()
	record, err := json.Marshal(k)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, keys := context.Background(), "{"+prefix+":keys}"
	_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, keys+":by-name", k.Name, string(k.Hash))
		p.HSet(ctx, keys+":by-hash", string(k.Hash), string(record))
		p.Incr(ctx, keys+":version")
		p.Set(ctx, keys+":generation", "planted-"+string(k.Hash), 0)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}
