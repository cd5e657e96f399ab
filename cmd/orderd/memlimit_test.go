package main

import (
	"bufio"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestServeSetsGOMEMLIMIT: with ORDERD_MEMORY_LIMIT (bytes, as the Kubernetes Deployment gives
// it), Go's soft memory limit is nine tenths of it, unless GOMEMLIMIT is set;
// go_gc_gomemlimit_bytes in /metrics shows the process's own. A value that is no number of
// bytes stops serve, as a bad flag does.
func TestServeSetsGOMEMLIMIT(t *testing.T) {
	for _, v := range []string{"256Mi", "-1", "0"} {
		_, errOut, code := orderd(t, map[string]string{"ORDERD_MEMORY_LIMIT": v}, "serve", "--db", filepath.Join(t.TempDir(), "none.db"))
		if code != 2 || !strings.Contains(errOut, "ORDERD_MEMORY_LIMIT") {
			t.Errorf("ORDERD_MEMORY_LIMIT=%s: exit %d, %q; want 2 naming it", v, code, errOut)
		}
	}
	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"256 MiB", []string{"ORDERD_MEMORY_LIMIT=268435456"}, "2.41591905e+08"},                            // 268435456 / 10 * 9
		{"GOMEMLIMIT wins", []string{"ORDERD_MEMORY_LIMIT=268435456", "GOMEMLIMIT=100MiB"}, "1.048576e+08"}, // 100 MiB
		{"none", nil, "9.223372036854776e+18"},                                                              // Go's default, no limit
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "o.db")
			orderdProcess(t, "keys", "create", "--plan", "free", "--name", "m", "--db", db) // makes the file
			cmd := orderdCommand("serve", "--addr", "127.0.0.1:0", "--db", db)
			cmd.Env = slices.DeleteFunc(cmd.Env, func(kv string) bool {
				return strings.HasPrefix(kv, "GOMEMLIMIT=") || strings.HasPrefix(kv, "ORDERD_MEMORY_LIMIT=")
			})
			cmd.Env = append(cmd.Env, tc.env...)
			base, _ := startServing(t, cmd)
			res, err := http.Get(base + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			for sc := bufio.NewScanner(res.Body); sc.Scan(); {
				if v, ok := strings.CutPrefix(sc.Text(), "go_gc_gomemlimit_bytes "); ok {
					if v != tc.want {
						t.Errorf("go_gc_gomemlimit_bytes %s, want %s", v, tc.want)
					}
					return
				}
			}
			t.Fatal("no go_gc_gomemlimit_bytes in /metrics")
		})
	}
}
