package ratelimit

import (
	"net"
	"strings"
	"testing"
)

func TestAddrCaller(t *testing.T) {
	for _, tc := range []struct {
		addr   string
		prefix int
		want   string
	}{
		{"192.0.2.1", 64, "addr:192.0.2.1"},
		{"192.0.2.2", 64, "addr:192.0.2.2"},
		{"::ffff:192.0.2.1", 64, "addr:192.0.2.1"},
		{"2001:db8:1:2:aaaa::1", 64, "addr:2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", 64, "addr:2001:db8:1:2::/64"},
		{"2001:db8:1:3::1", 64, "addr:2001:db8:1:3::/64"},
		{"[2001:db8:1:2::1]", 64, "addr:2001:db8:1:2::/64"},
		{"fe80::1%eth0", 64, "addr:fe80::/64"},
		{"[2001:db8::1]:443", 64, "addr:2001:db8::/64"},
		{"192.0.2.1:443", 64, "addr:192.0.2.1"},
		{"2001:db8:1:2::1", 48, "addr:2001:db8:1::/48"},
		{"2001:db8:1:2::1", 128, "addr:2001:db8:1:2::1/128"},
		{"2001:db8:1:2::1", 0, "addr:2001:db8:1:2::/64"}, // out of range: the default
		{"", 64, "addr:invalid"},
		{"not an address", 64, "addr:invalid"},
		{"{x}", 64, "addr:invalid"},
	} {
		if got := AddrCaller(tc.addr, tc.prefix); got != tc.want {
			t.Errorf("AddrCaller(%q, %d) = %q, want %q", tc.addr, tc.prefix, got, tc.want)
		}
	}
}

func TestKeyAndAnonymousCallers(t *testing.T) {
	anonymous := func(c string) bool { return strings.HasPrefix(c, addrCaller) } // as Memory tells them
	if !anonymous(AddrCaller("192.0.2.1", 64)) || !anonymous(AddrCaller("junk", 64)) {
		t.Error("an address caller is not anonymous")
	}
	if c := KeyCaller("abc"); c != "key:abc" || anonymous(c) {
		t.Errorf("KeyCaller: %q", c)
	}
	for _, bits := range []int{0, -1, 129} {
		if CheckIPv6Prefix(bits) == nil {
			t.Errorf("prefix %d accepted", bits)
		}
	}
}

func TestClientAddr(t *testing.T) {
	_, proxies, _ := net.ParseCIDR("192.0.2.0/24")
	_, proxies6, _ := net.ParseCIDR("2001:db8:ffff::/48")
	trusted := []*net.IPNet{proxies, proxies6}
	for _, tc := range []struct {
		peer string
		xff  []string
		want string
	}{
		{"198.51.100.1:5000", []string{"203.0.113.5"}, "198.51.100.1"}, // an untrusted peer is the client
		{"192.0.2.1:5000", nil, "192.0.2.1"},
		{"192.0.2.1:5000", []string{"203.0.113.5:4711"}, "203.0.113.5"},
		{"192.0.2.1:5000", []string{"[2001:db8::5]:443"}, "2001:db8::5"},
		{"192.0.2.1:5000", []string{"[2001:db8::5]"}, "2001:db8::5"},
		{"192.0.2.1:5000", []string{"fe80::1%eth0"}, "fe80::1"},
		{"192.0.2.1:5000", []string{"::ffff:203.0.113.5"}, "203.0.113.5"},
		{"192.0.2.1:5000", []string{"10.0.0.1, 203.0.113.5:4711"}, "203.0.113.5"},          // a forged hop on the left
		{"192.0.2.1:5000", []string{"10.0.0.1", "203.0.113.5 , 192.0.2.9"}, "203.0.113.5"}, // over lines, through two proxies
		{"[2001:db8:ffff::1]:5000", []string{"203.0.113.5, [2001:db8:ffff::2]:80"}, "203.0.113.5"},
		{"192.0.2.1:5000", []string{"192.0.2.8, 192.0.2.9"}, "192.0.2.8"}, // all trusted: the leftmost
		{"192.0.2.1:5000", []string{"203.0.113.5, unknown"}, "192.0.2.1"}, // no address: the peer
		{"192.0.2.1:5000", []string{"garbage, 203.0.113.5"}, "203.0.113.5"},
		{"not an address", []string{"203.0.113.5"}, ""},
	} {
		if got := ClientAddr(tc.peer, tc.xff, trusted); got != tc.want {
			t.Errorf("ClientAddr(%q, %q) = %q, want %q", tc.peer, tc.xff, got, tc.want)
		}
	}
}
