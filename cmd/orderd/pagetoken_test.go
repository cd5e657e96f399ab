package main

import (
	"io"
	"strings"
	"testing"
)

// TestPageTokenSecretFlag: --page-token-secret and its variable reach the Config, empty by
// default (the store's secret); a value under 32 bytes exits 2 naming the flag, and never
// shows the value.
func TestPageTokenSecretFlag(t *testing.T) {
	redis := []string{"--redis-url", "redis://127.0.0.1:1"} // parsing connects to nothing
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	secret, other := strings.Repeat("s", 32), strings.Repeat("v", 40)
	for _, tc := range []struct {
		args []string
		vars map[string]string
		want string
	}{
		{nil, nil, ""},
		{[]string{"--page-token-secret", secret}, nil, secret},
		{nil, map[string]string{"ORDERD_PAGE_TOKEN_SECRET": other}, other},
		{[]string{"--page-token-secret", secret}, map[string]string{"ORDERD_PAGE_TOKEN_SECRET": other}, secret},
	} {
		cfg, _, err := parseServe(append(append([]string{}, redis...), tc.args...), env(tc.vars), io.Discard)
		if err != nil || cfg.PageTokenSecret != tc.want {
			t.Errorf("%v %v: %q, %v; want %q", tc.args, tc.vars, cfg.PageTokenSecret, err, tc.want)
		}
	}

	short := "thirty-one-bytes-is-not-enough!"
	for _, tc := range []struct {
		args []string
		vars map[string]string
	}{
		{[]string{"--page-token-secret", short}, nil},
		{nil, map[string]string{"ORDERD_PAGE_TOKEN_SECRET": short}},
	} {
		_, _, err := parseServe(append(append([]string{}, redis...), tc.args...), env(tc.vars), io.Discard)
		var errOut strings.Builder
		code := exitCode(err, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), "--page-token-secret") || strings.Count(errOut.String(), "\n") != 1 {
			t.Errorf("%v %v: exit %d, %q; want 2 and one line naming --page-token-secret", tc.args, tc.vars, code, errOut.String())
		}
		if strings.Contains(errOut.String(), short) {
			t.Errorf("the error shows the secret: %q", errOut.String())
		}
	}
}
