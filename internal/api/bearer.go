package api

import (
	"context"
	"errors"
	"strings"

	"github.com/petstore/orderd/internal/order"
)

// Why a request carries no usable key; the messages go to the client as they are.
var (
	ErrNoCredentials = errors.New("no API key: send the header Authorization: Bearer API_KEY")
	ErrMalformed     = errors.New("malformed Authorization header: expected Bearer API_KEY")
	ErrUnknownKey    = errors.New("unknown or revoked API key")
)

// BearerToken extracts the token of an Authorization header (RFC 6750, RFC 9110): the scheme
// word is case-insensitive and the token is a token68. values are all the header's fields.
func BearerToken(values []string) (string, error) {
	if len(values) == 0 {
		return "", ErrNoCredentials
	}
	scheme, token, _ := strings.Cut(values[0], " ")
	token = strings.TrimLeft(token, " ") // "" without a space: no token68
	if len(values) > 1 || !strings.EqualFold(scheme, "Bearer") || !isToken68(token) {
		return "", ErrMalformed
	}
	return token, nil
}

// isToken68 reports whether s is a token68: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+"
// / "/" ) *"=". Checking it keeps control characters and spaces out of every later step.
func isToken68(s string) bool {
	body := strings.TrimRight(s, "=")
	return body != "" && len(s) <= 512 && strings.Trim(body, token68Chars) == ""
}

const token68Chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/"

// Caller is who sent a request: the key, if it carried a valid one, and the client address.
type Caller struct {
	Key  *order.Key
	Addr string
}

type callerKey struct{}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller carried by ctx, or nil.
func CallerFrom(ctx context.Context) *Caller {
	c, _ := ctx.Value(callerKey{}).(*Caller)
	return c
}
