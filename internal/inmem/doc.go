// Package inmem keeps what the service needs in the process's memory: a ratelimit.Limiter,
// exact for one instance, used by the embedded mode and as the Redis limiter's fallback.
package inmem
