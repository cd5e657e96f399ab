package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/redistest"
)

// TestHelpShowsEachCommandsOwnFlags: --help on every command and subcommand, and `orderd
// help COMMAND`, print that command's flags alone on stdout and exit 0.
func TestHelpShowsEachCommandsOwnFlags(t *testing.T) {
	store := []string{"--db", "--redis-url", "--redis-prefix", "--redis-timeout"}
	create := append([]string{"--plan", "--per-minute", "--per-day", "--name"}, store...)
	for _, tc := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"serve", "--help"}, []string{"--addr", "--metrics-addr", "--log-level", "--db"}, []string{"--plan", "Commands:"}},
		{[]string{"help", "serve"}, []string{"--addr", "--log-level"}, []string{"Commands:"}},
		{[]string{"keys", "--help"}, []string{"keys create", "keys list", "keys revoke"}, []string{"unknown"}},
		{[]string{"help", "keys"}, []string{"keys create", "keys list"}, nil},
		{[]string{"keys", "create", "--help"}, create, []string{"--addr"}},
		{[]string{"help", "keys", "create"}, create, []string{"--addr"}},
		{[]string{"keys", "list", "--help"}, store, []string{"--plan", "--per-minute", "--name"}},
		{[]string{"keys", "revoke", "-h"}, store, []string{"--plan", "--per-day", "--name"}},
		{[]string{"import", "--help"}, append([]string{"--orders", "--pets"}, store...), []string{"--plan", "--addr"}},
		{[]string{"webhooks", "--help"}, []string{"webhooks create", "webhooks list", "webhooks delete", "webhooks enable"}, []string{"unknown"}},
		{[]string{"webhooks", "enable", "--help"}, append([]string{"--skip-to-newest"}, store...), []string{"--url", "--types"}},
		{[]string{"webhooks", "create", "--help"}, append([]string{"--url", "--types"}, store...), []string{"--addr", "--plan"}},
		{[]string{"webhooks", "list", "--help"}, store, []string{"--url", "--types"}},
		{[]string{"serve", "--help"}, []string{"--webhooks-allow-private", "--webhooks-retry", "--webhooks-give-up", "--webhooks-lease"}, nil},
		{[]string{"version", "--help"}, []string{"Usage: orderd version"}, []string{"Commands:", "Flags"}},
		{[]string{"webhooks", "delete", "-h"}, store, []string{"--url", "--types"}},
		{[]string{"help"}, []string{"Commands:", "orderd version"}, nil},
		{[]string{"--help"}, []string{"Commands:"}, nil},
	} {
		out, errOut, code := orderd(t, nil, tc.args...)
		if code != 0 || errOut != "" {
			t.Errorf("%v: exit %d, stderr %q; want 0 and nothing", tc.args, code, errOut)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: no %q in\n%s", tc.args, w, out)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(out, n) {
				t.Errorf("%v: %q, which is not its own, in\n%s", tc.args, n, out)
			}
		}
	}
	if _, errOut, code := orderd(t, nil, "help", "fly"); code != 2 || !strings.Contains(errOut, "fly") {
		t.Errorf("help fly: exit %d, %q; want 2 naming it", code, errOut)
	}
}

func TestVersion(t *testing.T) {
	out, errOut, code := orderd(t, nil, "version")
	if code != 0 || errOut != "" || !strings.HasPrefix(out, "orderd ") || !strings.Contains(out, "commit ") ||
		!strings.Contains(out, runtime.Version()) || strings.Count(out, "\n") != 1 {
		t.Fatalf("version: exit %d, %q %q", code, out, errOut)
	}
}

// TestVersionOfMakeBuildNamesTheCommit: `make build` stamps the commit the tree is at.
func TestVersionOfMakeBuildNamesTheCommit(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err) // a source copy without .git has no commit to stamp
	}
	bin := t.TempDir() + "/orderd"
	if out, err := exec.Command("make", "-C", "../..", "--no-print-directory", "build", "BIN="+bin).CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.Contains(string(out), "commit "+strings.TrimSpace(string(head))) {
		t.Fatalf("version of make build: %q, %v; want commit %s", out, err, head)
	}
}

// TestBadSettingsExit2NamingTheFlag: every bad setting stops the command with exit 2 and
// one line naming the flag, before any store is opened.
func TestBadSettingsExit2NamingTheFlag(t *testing.T) {
	db := t.TempDir() + "/none.db" // missing: a setting must be refused before the file is looked at
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--db", db, "--addr", "nonsense"}, "--addr"},
		{[]string{"serve", "--db", db, "--addr", "127.0.0.1:99999"}, "--addr"},
		{[]string{"serve", "--db", db, "--metrics-addr", "localhost"}, "--metrics-addr"},
		{[]string{"serve", "--db", db, "--redis-timeout", "-1s"}, "--redis-timeout"},
		{[]string{"serve", "--db", db, "--ban-for", "x"}, "ban-for"},
		{[]string{"serve", "--db", db, "--log-level", "loud"}, "log-level"},
		{[]string{"serve", "--db", db, "--page-token-secret", "short"}, "--page-token-secret"},
		{[]string{"serve", "--redis-url", "http://127.0.0.1:6379"}, "--redis-url"},
		{[]string{"keys", "list", "--redis-url", "redis://127.0.0.1:6379/x"}, "--redis-url"},
		{[]string{"import", "--orders", "x.json", "--redis-url", "ftp://h"}, "--redis-url"},
		{[]string{"serve", "--db", db, "--webhooks-retry", "5s,x"}, "webhooks-retry"},
		{[]string{"serve", "--db", db, "--webhooks-retry", "5s,0s"}, "--webhooks-retry"},
		{[]string{"serve", "--db", db, "--webhooks-retry", "30s,5s"}, "--webhooks-retry"},
		{[]string{"serve", "--db", db, "--webhooks-give-up", "0s"}, "--webhooks-give-up"},
		{[]string{"serve", "--db", db, "--webhooks-lease", "500ms"}, "--webhooks-lease"},
		{[]string{"keys"}, "create, list or revoke"},
		{[]string{"version", "extra"}, "extra"},
	} {
		out, errOut, code := orderd(t, nil, tc.args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line naming %s", tc.args, code, out, errOut, tc.want)
		}
	}
}

// TestUnreachableRedisIsOneLine: keys and import, as processes, print one line on stderr
// when Redis does not answer, and none of go-redis's own.
func TestUnreachableRedisIsOneLine(t *testing.T) {
	srv := redistest.Start(t)
	url := srv.URL()
	srv.Stop()
	for _, args := range [][]string{
		{"keys", "list", "--redis-url", url},
		{"import", "--orders", "../../testdata/demo/orders.json", "--redis-url", url},
	} {
		cmd := orderdCommand(args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			t.Errorf("%v: %v; want exit 2", args, err)
		}
		if strings.Count(stderr.String(), "\n") != 1 || !strings.HasPrefix(stderr.String(), "orderd: ") {
			t.Errorf("%v: stderr %q; want the one line", args, stderr.String())
		}
	}
}

// TestIdleServeWithRedisDownWarnsOnce: an idle serve whose Redis is down warns of the outage
// once, not at every failed dial of go-redis's pool; go-redis's own lines are JSON debug
// lines, seen with --log-level debug.
func TestIdleServeWithRedisDownWarnsOnce(t *testing.T) {
	srv := redistest.Start(t)
	url := srv.URL()
	srv.Stop()
	for _, level := range []string{"info", "debug"} {
		cmd := orderdCommand("serve", "--addr", "127.0.0.1:0", "--shutdown-delay", "0", "--redis-url", url, "--redis-timeout", "200ms", "--log-level", level)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second) // idle: go-redis's pool dials again several times a second
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("serve: %v\n%s", err, stderr.String())
		}
		warnings, redisLines := 0, 0
		for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
			var rec struct{ Level, Msg string }
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("--log-level %s: not a JSON line: %q", level, line)
			}
			if rec.Level == "WARN" {
				warnings++
			}
			if strings.HasPrefix(rec.Msg, "redis client: redis: connection pool") {
				redisLines++
				if rec.Level != "DEBUG" {
					t.Errorf("go-redis's pool line at %s: %q", rec.Level, line)
				}
			}
		}
		if warnings != 1 {
			t.Errorf("--log-level %s: %d warnings in 3s of an idle outage, want 1:\n%s", level, warnings, stderr.String())
		}
		if (level == "debug") != (redisLines > 0) {
			t.Errorf("--log-level %s: %d of go-redis's pool lines", level, redisLines)
		}
	}
}

// TestFlagErrorsNameTheFlagAsTyped: a flag error names the flag as it was typed (--bogus,
// not the flag package's -bogus) and, for a bad value, the form wanted; `keys create`
// without --plan says that it is required.
func TestFlagErrorsNameTheFlagAsTyped(t *testing.T) {
	db := t.TempDir() + "/none.db"
	for _, tc := range []struct {
		env       map[string]string
		args      []string
		want, not string
	}{
		{nil, []string{"serve", "--bogus"}, "unknown flag --bogus", " -bogus"},
		{nil, []string{"serve", "-bogus=1"}, "unknown flag -bogus", "--bogus"},
		{nil, []string{"keys", "list", "--db", db, "--nope"}, "unknown flag --nope", " -nope"},
		{nil, []string{"serve", "--db", db, "--ban-for", "15"}, `--ban-for: want a duration like 15m`, "parse error"},
		{nil, []string{"serve", "--db", db, "--ban-for=15"}, `--ban-for: want a duration like 15m`, "parse error"},
		{nil, []string{"serve", "--addr"}, "--addr needs a value", " -addr"},
		{nil, []string{"serve", "--db", db, "--ipv6-prefix", "/64"}, `--ipv6-prefix: want a whole number, not "/64"`, "parse error"},
		{nil, []string{"serve", "--db", db, "--log-level", "loud"}, "--log-level: want debug, info, warn or error", " -log-level"},
		{nil, []string{"serve", "--db", db, "--webhooks-allow-private=maybe"}, "--webhooks-allow-private: want true or false", "parse error"},
		{map[string]string{"ORDERD_BAN_FOR": "15"}, []string{"serve", "--db", db}, "ORDERD_BAN_FOR: want a duration like 15m", "parse error"},
		{nil, []string{"keys", "create", "--db", db, "--plan", "enterprise", "--per-minute", "x"}, "--per-minute: want a whole number", "parse error"},
		{nil, []string{"keys", "create", "--db", db}, "--plan is required", `""`},
	} {
		out, errOut, code := orderd(t, tc.env, tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, tc.not) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q, without %q", tc.args, code, errOut, tc.want, tc.not)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a command that failed on its flags made the store's file")
	}
}
