package redisstore

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/store"
)

// carried is what one request's round trip to Redis read for its later steps (see
// store.Trip): the limiter's script is sent with the reads of the orders' and the keys'
// versions, in one pipeline, and a key answered from the cache before it is confirmed
// against the keys' version read there.
type carried struct {
	prefix string // the deployment whose versions these are
	// read: orders and keys hold the versions read in the round trip.
	read         bool
	orders, keys version
	// A key answered from keys's cache, provisionally, while the cache was at answeredAt.
	answered   bool
	keyStore   *Keys
	hash       auth.Hash
	answeredAt version
}

var _ store.Carried = (*carried)(nil)

// carriedOf returns the reads of ctx's Trip for the deployment with prefix, made on first
// use; nil without a Trip, or when the Trip carries another deployment's reads.
func carriedOf(ctx context.Context, prefix string) *carried {
	t := store.TripOf(ctx)
	if t == nil {
		return nil
	}
	c, _ := t.Carried.(*carried)
	if c == nil {
		c = &carried{prefix: prefix}
		t.Carried = c
	}
	if c.prefix != prefix {
		return nil
	}
	return c
}

// Confirm confirms a key answered from the cache: nothing to do when the keys' version read
// in the round trip is the cache's; otherwise (the keys moved, or the round trip did not
// read them, as when the limiter's fallback decided) the key is read again, and
// auth.ErrKeyNotFound says it is gone.
func (c *carried) Confirm(ctx context.Context) error {
	if !c.answered {
		return nil
	}
	c.answered = false
	if c.read && c.keys == c.answeredAt {
		return nil
	}
	_, err := c.keyStore.read(ctx, c.hash)
	return err
}

// keep takes the versions read in the request's round trip (the replies of MGET counter
// generation), when both were read whole. A version without a generation, or a failed read,
// is left to the store that needs it, which reads it again.
func (c *carried) keep(orders, keys *redis.SliceCmd) {
	if orders.Err() != nil || keys.Err() != nil {
		return
	}
	o, oerr := parseVersion(orders.Val())
	k, kerr := parseVersion(keys.Val())
	if oerr == nil && kerr == nil {
		c.read, c.orders, c.keys = true, o, k
	}
}
