package main

import (
	"io"
	"strings"
	"testing"

	"github.com/petstore/orderd/internal/ratelimit"
)

// TestAnonymousLimitFlags: --ipv6-prefix and --anonymous-callers-max, and their variables,
// reach the Config; their defaults are the limiter's; bad values exit 2 naming the flag.
func TestAnonymousLimitFlags(t *testing.T) {
	redis := []string{"--redis-url", "redis://127.0.0.1:1"} // parsing connects to nothing
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	cfg, _, err := parseServe(redis, env(nil), io.Discard)
	if err != nil || cfg.IPv6Prefix != ratelimit.DefaultIPv6Prefix || cfg.MaxAnonymousCallers != ratelimit.DefaultMaxAnonymous {
		t.Fatalf("defaults: %v, prefix %d, cap %d", err, cfg.IPv6Prefix, cfg.MaxAnonymousCallers)
	}
	cfg, _, err = parseServe(append(redis, "--ipv6-prefix", "56", "--anonymous-callers-max", "5000"), env(nil), io.Discard)
	if err != nil || cfg.IPv6Prefix != 56 || cfg.MaxAnonymousCallers != 5000 {
		t.Fatalf("flags: %v, prefix %d, cap %d", err, cfg.IPv6Prefix, cfg.MaxAnonymousCallers)
	}
	vars := map[string]string{"ORDERD_IPV6_PREFIX": "48", "ORDERD_ANONYMOUS_CALLERS_MAX": "640"}
	cfg, _, err = parseServe(redis, env(vars), io.Discard)
	if err != nil || cfg.IPv6Prefix != 48 || cfg.MaxAnonymousCallers != 640 {
		t.Fatalf("variables: %v, prefix %d, cap %d", err, cfg.IPv6Prefix, cfg.MaxAnonymousCallers)
	}
	cfg, _, err = parseServe(append(redis, "--ipv6-prefix", "60"), env(vars), io.Discard)
	if err != nil || cfg.IPv6Prefix != 60 || cfg.MaxAnonymousCallers != 640 {
		t.Fatalf("flag over variable: %v, prefix %d", err, cfg.IPv6Prefix)
	}

	for _, tc := range []struct {
		args []string
		vars map[string]string
		want string
	}{
		{[]string{"--ipv6-prefix", "0"}, nil, "--ipv6-prefix"},
		{[]string{"--ipv6-prefix", "129"}, nil, "--ipv6-prefix"},
		{[]string{"--ipv6-prefix", "/64"}, nil, "ipv6-prefix"},
		{nil, map[string]string{"ORDERD_IPV6_PREFIX": "200"}, "--ipv6-prefix"},
		{[]string{"--anonymous-callers-max", "0"}, nil, "--anonymous-callers-max"},
		{[]string{"--anonymous-callers-max", "-3"}, nil, "--anonymous-callers-max"},
		{nil, map[string]string{"ORDERD_ANONYMOUS_CALLERS_MAX": "many"}, "ORDERD_ANONYMOUS_CALLERS_MAX"},
	} {
		_, _, err := parseServe(append(append([]string{}, redis...), tc.args...), env(tc.vars), io.Discard)
		var errOut strings.Builder
		if code := exitCode(err, &errOut); code != 2 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v %v: exit %d, %q; want 2 naming %s", tc.args, tc.vars, code, errOut.String(), tc.want)
		}
	}
}
