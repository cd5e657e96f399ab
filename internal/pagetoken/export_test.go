package pagetoken

import "github.com/petstore/orderd/internal/order"

// MakeWithFormat makes a token as Make does but with another format byte: what another
// version of the API, under the same secret, would make.
func MakeWithFormat(secret []byte, format byte, f order.Filter, after int64) string {
	return makeToken(secret, format, f, after)
}
