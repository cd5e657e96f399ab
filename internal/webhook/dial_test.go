package webhook_test

import (
	"net/netip"
	"testing"

	"github.com/petstore/orderd/internal/webhook"
)

func TestPublic(t *testing.T) {
	for addr, want := range map[string]bool{
		"93.184.215.14": true, "2606:2800:21f:cb07:6820:80da:af6b:8b2c": true,
		"127.0.0.1": false, "::1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "fe80::1": false, "fc00::1": false, "0.0.0.0": false, "::": false,
		"224.0.0.1": false, "ff02::1": false, "255.255.255.255": false,
		"::ffff:127.0.0.1": false, "::ffff:169.254.169.254": false, "::ffff:93.184.215.14": true,
	} {
		if got := webhook.Public(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Public(%s) = %v, want %v", addr, got, want)
		}
	}
}

// TestPublicSpecialPurpose covers the blocks of the IANA special-purpose registries that reach a
// machine's own networks although netip's predicates call them global unicast, and the IPv6 forms
// that embed an IPv4 address a translator or tunnel would then reach.
func TestPublicSpecialPurpose(t *testing.T) {
	for _, c := range []struct {
		addr string
		want bool
		why  string
	}{
		{"100.64.0.1", false, "shared address space (CGNAT)"},
		{"100.100.100.200", false, "Alibaba Cloud metadata, in 100.64.0.0/10"},
		{"100.127.255.254", false, "top of 100.64.0.0/10"},
		{"0.1.2.3", false, `"this network"`},
		{"192.0.0.8", false, "IETF protocol assignments"},
		{"198.18.0.1", false, "benchmarking"},
		{"198.19.255.254", false, "top of 198.18.0.0/15"},
		{"240.0.0.1", false, "reserved"},
		{"255.255.255.254", false, "reserved"},
		{"::ffff:100.100.100.200", false, "IPv4-mapped CGNAT"},
		{"64:ff9b::7f00:1", false, "NAT64 of 127.0.0.1"},
		{"64:ff9b::a9fe:a9fe", false, "NAT64 of 169.254.169.254"},
		{"64:ff9b::a00:1", false, "NAT64 of 10.0.0.1"},
		{"64:ff9b::6464:64c8", false, "NAT64 of 100.100.100.200"},
		{"64:ff9b::7f00:1%eth0", false, "NAT64 of 127.0.0.1, zoned"},
		{"64:ff9b:1::5db8:d70e", false, "local-use NAT64"},
		{"2002:7f00:1::1", false, "6to4 of 127.0.0.1"},
		{"2002:5db8:d70e::1", false, "6to4, refused whatever the IPv4"},
		{"2001:0:5db8:d70e::1", false, "Teredo"},
		{"::7f00:1", false, "IPv4-compatible 127.0.0.1"},
		{"::a9fe:a9fe", false, "IPv4-compatible 169.254.169.254"},
		{"fec0::1", false, "site-local"},
		{"fec0::1%eth0", false, "site-local, zoned"},

		{"93.184.215.14", true, "public IPv4"},
		{"100.63.255.255", true, "just below 100.64.0.0/10"},
		{"100.128.0.0", true, "just above 100.64.0.0/10"},
		{"198.20.0.1", true, "just above 198.18.0.0/15"},
		{"1.1.1.1", true, "public IPv4"},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", true, "public IPv6"},
		{"2001:4860:4860::8888", true, "public IPv6 in 2001::/16, outside Teredo"},
		{"64:ff9b::5db8:d70e", true, "NAT64 of public 93.184.215.14"},
		{"64:ff9b::1.1.1.1", true, "NAT64 of public 1.1.1.1"},
	} {
		if got := webhook.Public(netip.MustParseAddr(c.addr)); got != c.want {
			t.Errorf("Public(%s) = %v, want %v (%s)", c.addr, got, c.want, c.why)
		}
	}
}
