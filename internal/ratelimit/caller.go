package ratelimit

import (
	"fmt"
	"net"
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
	a, ok := parseAddr(addr)
	if !ok {
		return invalidAddr
	}
	if a.Is4() {
		return addrCallerPrefix + a.String()
	}
	if CheckIPv6Prefix(ipv6Prefix) != nil {
		ipv6Prefix = DefaultIPv6Prefix
	}
	p, _ := a.Prefix(ipv6Prefix)
	return addrCallerPrefix + p.String()
}

// parseAddr reads an address as proxies and servers write one: perhaps bracketed, zoned or
// with a port, which are not part of who the client is.
func parseAddr(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	if err != nil {
		ap, perr := netip.ParseAddrPort(s)
		if perr != nil {
			return netip.Addr{}, false
		}
		a = ap.Addr()
	}
	return a.Unmap().WithZone(""), true
}

// ClientAddr returns the client's address of a request from peer (its RemoteAddr) that
// carries the X-Forwarded-For lines xff: the peer, unless it is in trusted; then, walking the
// hops from the right, the first one not in trusted (or the leftmost, if all are), so that
// hops a client wrote itself, on the left, are never believed. A hop is read as AddrCaller
// reads an address, port and all; a hop that is no address at all makes the record
// untrustworthy, and the peer counts. "" if the peer is no address.
func ClientAddr(peer string, xff []string, trusted []*net.IPNet) string {
	isTrusted := func(a netip.Addr) bool {
		for _, n := range trusted {
			if n.Contains(a.AsSlice()) {
				return true
			}
		}
		return false
	}
	p, ok := parseAddr(peer)
	if !ok {
		return ""
	}
	if !isTrusted(p) || len(xff) == 0 {
		return p.String()
	}
	hops := strings.Split(strings.Join(xff, ","), ",")
	var a netip.Addr
	for i := len(hops) - 1; i >= 0; i-- {
		if a, ok = parseAddr(strings.TrimSpace(hops[i])); !ok {
			return p.String()
		}
		if !isTrusted(a) {
			break
		}
	}
	return a.String()
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
