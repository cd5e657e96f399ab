// Package inmem keeps what the service needs in the process's memory: a ratelimit.Limiter,
// exact for one instance; the limiter of the embedded mode, whose counters and bans last as
// long as the process, and the fallback of the Redis limiter when Redis cannot be reached.
package inmem
