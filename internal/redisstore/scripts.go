package redisstore

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts, one per atomic step. A Script runs with EVALSHA and falls back to EVAL when
// Redis does not hold it yet. Those that write several keys begin with writes.lua, which
// checks those keys before the first write.
var (
	//go:embed writes.lua
	writesSource string

	//go:embed rate.lua
	rateSource string
	rateScript = redis.NewScript(rateSource) // the rate-limit decisions of one caller (limiter.go, ratebatch.go)

	//go:embed cancel.lua
	cancelSource string
	cancelScript = redis.NewScript(writesSource + cancelSource) // one cancel (orders.go)
	//go:embed import.lua
	importSource string
	importScript = redis.NewScript(writesSource + importSource) // one batch of an import (orders.go)
	//go:embed reindex.lua
	reindexSource string
	reindexScript = redis.NewScript(writesSource + reindexSource) // one batch of a rebuild of the indexes (index.go)
	//go:embed find.lua
	findSource string
	findScript = redis.NewScript(findSource) // one page of a Find (find.go)

	//go:embed addkey.lua
	addKeySource string
	addKeyScript = redis.NewScript(writesSource + addKeySource) // a new key, its name unique (keys.go)
	//go:embed revokekey.lua
	revokeKeySource string
	revokeKeyScript = redis.NewScript(writesSource + revokeKeySource) // a key revoked by name (keys.go)
)
