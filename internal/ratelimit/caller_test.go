package ratelimit

import "testing"

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
	if !Anonymous(AddrCaller("192.0.2.1", 64)) || !Anonymous(AddrCaller("junk", 64)) {
		t.Error("an address caller is not anonymous")
	}
	if c := KeyCaller("abc"); c != "key:abc" || Anonymous(c) {
		t.Errorf("KeyCaller: %q", c)
	}
	for _, bits := range []int{0, -1, 129} {
		if CheckIPv6Prefix(bits) == nil {
			t.Errorf("prefix %d accepted", bits)
		}
	}
}
