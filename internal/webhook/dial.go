package webhook

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// ErrForbiddenAddress refuses to dial an address an outside URL must not reach: a private,
// loopback, link-local, unspecified or multicast one (an endpoint URL could otherwise make
// orderd probe the network it runs in).
var ErrForbiddenAddress = errors.New("webhook: the address is not public")

// NewClient returns the client deliveries are sent with. Unless allowPrivate, it refuses to
// connect to an address that is not public: the check is on the address dialed (the Dialer's
// Control), so a name that resolves once to a public address and then to a private one is
// caught too. It uses no proxy (the proxy would be dialed, not the endpoint) and follows no
// redirect (a 3xx is a failed attempt, and a redirect could point anywhere).
func NewClient(allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	if !allowPrivate {
		d.Control = refusePrivate
	}
	return &http.Client{
		Transport: &http.Transport{
			DialContext:         d.DialContext,
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConnsPerHost: 2,
			IdleConnTimeout:     time.Minute,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func refusePrivate(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, address)
	}
	if !Public(ap.Addr()) {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, ap.Addr())
	}
	return nil
}

// Public reports whether a is an address deliveries may go to without --webhooks-allow-private.
func Public(a netip.Addr) bool {
	a = a.Unmap() // ::ffff:127.0.0.1 is 127.0.0.1
	return a.IsValid() && a.IsGlobalUnicast() && !a.IsPrivate() && !a.IsLoopback() &&
		!a.IsLinkLocalUnicast() && !a.IsUnspecified() && !a.IsMulticast()
}
