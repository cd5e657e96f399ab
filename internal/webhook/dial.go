package webhook

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"syscall"
	"time"
)

// ErrForbiddenAddress refuses to dial an address that is not public (Public): an endpoint URL
// could otherwise make orderd probe the network it runs in.
var ErrForbiddenAddress = errors.New("webhook: the address is not public")

// NewClient returns the deliveries' client. Unless allowPrivate, it checks the address dialed (lest a
// name resolve elsewhere after a check); no proxy (it would be dialed), no redirect (it could go anywhere).
func NewClient(allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	if !allowPrivate {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			if ap, err := netip.ParseAddrPort(address); err != nil || !Public(ap.Addr()) {
				return fmt.Errorf("%w: %s", ErrForbiddenAddress, address)
			}
			return nil
		}
	}
	return &http.Client{
		Transport: &http.Transport{DialContext: d.DialContext, TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConnsPerHost: 2, IdleConnTimeout: time.Minute},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// notPublic are the special-purpose blocks netip calls global unicast but a network may answer on,
// and IPv6 forms that tunnel to IPv4. 64:ff9b::/96 (NAT64, RFC 6052) is judged by its IPv4 address.
var notPublic, nat64 = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network" (RFC 1122): 0.0.0.0 dials this host
	netip.MustParsePrefix("100.64.0.0/10"),  // shared (RFC 6598): CGNAT, pod networks, Alibaba's metadata
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments (RFC 6890): DS-Lite, NAT64 discovery
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking (RFC 2544)
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved (RFC 1112), and limited broadcast
	netip.MustParsePrefix("::/96"),          // IPv4-compatible (RFC 4291)
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64 (RFC 8215): where the IPv4 sits depends on the local prefix
	netip.MustParsePrefix("2001::/32"),      // Teredo (RFC 4380)
	netip.MustParsePrefix("2002::/16"),      // 6to4 (RFC 3056)
	netip.MustParsePrefix("fec0::/10"),      // site-local (RFC 3879): still routed inside some sites
}, netip.MustParsePrefix("64:ff9b::/96")

// Public reports whether a is an address deliveries may go to without --webhooks-allow-private.
func Public(a netip.Addr) bool {
	a = a.WithZone("").Unmap() // a zone would keep Prefix.Contains from matching; ::ffff:127.0.0.1 is 127.0.0.1
	if nat64.Contains(a) {
		return Public(netip.AddrFrom4([4]byte(a.AsSlice()[12:])))
	}
	// IsGlobalUnicast is false for invalid, loopback, link-local, unspecified and multicast addresses.
	return a.IsGlobalUnicast() && !a.IsPrivate() && !slices.ContainsFunc(notPublic, func(p netip.Prefix) bool { return p.Contains(a) })
}
