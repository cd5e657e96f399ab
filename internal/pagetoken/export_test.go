package pagetoken

import (
	"time"

	"github.com/petstore/orderd/internal/order"
)

// MakeWithFormat makes a token as Make does but with another format byte: what another
// version of the API, under the same secret, would make.
func MakeWithFormat(secret []byte, format byte, f order.Filter, after int64) string {
	return makeToken(secret, format, f, after)
}

// SetClock makes c read the time from now: the tests move it past RereadEvery.
func SetClock(c *Codec, now func() time.Time) { c.now = now }
