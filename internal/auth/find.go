package auth

import (
	"fmt"
	"strings"
)

// LooksLikePrefix reports whether s starts as every key does, so that it may be a key's shown
// prefix rather than its name.
func LooksLikePrefix(s string) bool { return strings.HasPrefix(s, keyPrefix) }

// DefaultName is the name of a key made without one: "key-" and the random part of its shown
// prefix, so that two keys almost never get the same default.
func DefaultName(prefix string) string { return "key-" + strings.TrimPrefix(prefix, keyPrefix) }

// Find returns the key of keys named nameOrPrefix, or else the first whose shown prefix it
// is, or ErrKeyNotFound. Names come first: an operator chose them. Every KeyStore's Revoke
// follows this rule.
func Find(keys []Key, nameOrPrefix string) (Key, error) {
	for _, k := range keys {
		if k.Name == nameOrPrefix {
			return k, nil
		}
	}
	if LooksLikePrefix(nameOrPrefix) {
		for _, k := range keys {
			if k.Prefix == nameOrPrefix {
				return k, nil
			}
		}
	}
	return Key{}, fmt.Errorf("%w: %q", ErrKeyNotFound, nameOrPrefix)
}
