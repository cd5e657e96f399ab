package ratelimit

import (
	"fmt"
	"net/netip"
	"strings"
)

// Caller ids, built only here: key:<hash>, addr:<IPv4>, addr:<IPv6 prefix>/<n> (one IPv6
// subscriber commonly has a whole /64 to change addresses within), and addr:invalid.
const (
	keyCallerPrefix  = "key:"
	addrCallerPrefix = "addr:"
	invalidAddr      = addrCallerPrefix + "invalid"
)

// DefaultIPv6Prefix is the prefix length by which anonymous IPv6 callers are counted.
const DefaultIPv6Prefix = 64

// KeyCaller returns the caller id of a request made with a valid API key of hash hash.
func KeyCaller(hash string) string { return keyCallerPrefix + hash }

// AddrCaller returns the caller id of a request without a valid key from addr, as echo's
// RealIP reads it (perhaps bracketed, zoned or with a port), IPv6 by its ipv6Prefix bits.
func AddrCaller(addr string, ipv6Prefix int) string {
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]"))
	if err != nil {
		ap, perr := netip.ParseAddrPort(addr)
		if perr != nil {
			return invalidAddr
		}
		a = ap.Addr()
	}
	if a = a.Unmap().WithZone(""); a.Is4() {
		return addrCallerPrefix + a.String()
	}
	if CheckIPv6Prefix(ipv6Prefix) != nil {
		ipv6Prefix = DefaultIPv6Prefix
	}
	p, _ := a.Prefix(ipv6Prefix)
	return addrCallerPrefix + p.String()
}

// CheckIPv6Prefix says whether bits can be the prefix length of IPv6 callers.
func CheckIPv6Prefix(bits int) error {
	if bits < 1 || bits > 128 {
		return fmt.Errorf("IPv6 prefix length %d is not within 1 and 128", bits)
	}
	return nil
}

// Anonymous reports whether caller has no key: only such callers may be forgotten.
func Anonymous(caller string) bool { return strings.HasPrefix(caller, addrCallerPrefix) }
