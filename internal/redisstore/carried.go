package redisstore

import (
	"context"

	"github.com/petstore/orderd/internal/order"
	"github.com/redis/go-redis/v9"
)

// carried is what a request's round trip (order.Trip) read, and a key answered before it.
type carried struct {
	prefix       string // the deployment whose versions these are
	read         bool   // orders and keys hold the versions read in the round trip
	orders, keys version
	// A key answered from keyStore's cache, provisionally, while the cache was at answeredAt.
	answered   bool
	keyStore   *Keys
	hash       order.Hash
	answeredAt version
}

var _ order.Carried = (*carried)(nil)

// carriedOf returns ctx's Trip's reads for prefix's deployment, or nil.
func carriedOf(ctx context.Context, prefix string) *carried {
	t := order.TripOf(ctx)
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

// Confirm confirms a key answered from the cache, by the round trip's version or a new read.
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

// keep takes the round trip's versions if both parse (a failed MGET holds no values).
func (c *carried) keep(orders, keys *redis.SliceCmd) {
	o, oerr := parseVersion(orders.Val())
	k, kerr := parseVersion(keys.Val())
	if oerr == nil && kerr == nil {
		c.read, c.orders, c.keys = true, o, k
	}
}
