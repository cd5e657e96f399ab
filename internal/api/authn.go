package api

import (
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/store"
)

// identify finds out who the caller is: the key, when the request carries a valid one, and
// the client address. It refuses nothing: the rate limiter, next in the chain, must see
// callers with a bad key too, so that guessing keys is limited.
func identify(keys auth.KeyStore) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			caller := &auth.Caller{Addr: c.RealIP()}
			token, err := auth.BearerToken(req.Header.Values("Authorization"))
			if err == nil {
				var k auth.Key
				k, err = keys.Lookup(req.Context(), auth.HashOf(token))
				switch {
				case err == nil:
					caller.Key = &k
				case errors.Is(err, auth.ErrKeyNotFound):
					err = auth.ErrUnknownKey
				case !errors.Is(err, store.ErrUnavailable):
					err = errors.Join(store.ErrUnavailable, err)
				}
			}
			caller.KeyErr = err
			c.SetRequest(req.WithContext(auth.WithCaller(req.Context(), caller)))
			return next(c)
		}
	}
}

// authenticate refuses a request without a valid key: 401, or 503 when the key store cannot
// be reached (the key may well be valid). Operations whose security is empty in the contract
// (public, by method and echo route) need no key.
func authenticate(public map[string]bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if public[c.Request().Method+" "+c.Path()] {
				return next(c)
			}
			return requireKey(next, c)
		}
	}
}

func requireKey(next echo.HandlerFunc, c echo.Context) error {
	caller := auth.CallerFrom(c.Request().Context())
	if caller == nil || caller.Key == nil {
		if caller == nil || caller.KeyErr == nil {
			return auth.ErrNoCredentials
		}
		return caller.KeyErr
	}
	return next(c)
}
