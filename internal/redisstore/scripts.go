package redisstore

import (
	"embed"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts; those that write several keys check them first (writes.lua).
var (
	//go:embed *.lua
	luaFiles embed.FS

	rateScript      = script("rate.lua")
	eventsScript    = script("events.lua")
	trimScript      = script("trim.lua")
	cancelScript    = script("writes.lua", "cancel.lua")
	importScript    = script("writes.lua", "import.lua")
	addKeyScript    = script("writes.lua", "addkey.lua")
	revokeKeyScript = script("writes.lua", "revokekey.lua")
)

func script(files ...string) *redis.Script {
	var src string
	for _, f := range files {
		b, err := luaFiles.ReadFile(f)
		if err != nil {
			panic(err) // embedded: never
		}
		src += string(b)
	}
	return redis.NewScript(src)
}
