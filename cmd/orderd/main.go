// Command orderd serves the Store Order Service and manages its keys. See README.md.
package main

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/service"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal begins the shutdown; a second one then has Go's default effect and ends
	// the process at once, drain or no drain (an operator's second Ctrl-C).
	context.AfterFunc(ctx, stop)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// usage is `orderd help`: the commands and what every command shares. Its lines are the
// commands' synopses, for their --help too.
//
//go:embed usage.txt
var usage string

// run is the whole program, minus the process: it takes what main would read from the
// environment, so tests call it directly.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageErrorf("no command given")
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "serve":
		return serve(ctx, rest, getenv, stdout, stderr)
	case "keys", "webhooks", "import":
		return admin(ctx, cmd, rest, getenv, stdout, stderr)
	case "version", "--version", "-version":
		_, err := parseFlags(flag.NewFlagSet("version", flag.ContinueOnError), nil, rest, 0, getenv, stdout)
		if v, c := buildVersion(); err == nil {
			fmt.Fprintf(stdout, "orderd %s (commit %s, %s)\n", v, c, runtime.Version())
		}
		return err
	case "help", "-h", "--help", "-help":
		if cmd != "help" || len(rest) == 0 || rest[0] == "help" || rest[0] == "version" {
			fmt.Fprint(stdout, usage)
			return nil
		}
		// `orderd help serve` is `orderd serve --help`: the command's own flags.
		return run(ctx, append(rest, "--help"), getenv, stdout, stderr)
	default:
		return usageErrorf("unknown command %q (want serve, keys, webhooks, import, version or help)", cmd)
	}
}

// version and commit are stamped by `make build` (-ldflags -X).
var version, commit string

// buildVersion is the version and the commit stamped, else the build's own record's.
func buildVersion() (v, c string) {
	v, c = version, commit
	if info, ok := debug.ReadBuildInfo(); ok {
		vcs := map[string]string{}
		for _, s := range info.Settings {
			vcs[s.Key] = s.Value
		}
		modified := map[string]string{"true": " (modified)"}[vcs["vcs.modified"]]
		v, c = cmp.Or(v, info.Main.Version), cmp.Or(c, vcs["vcs.revision"]+modified)
	}
	return cmp.Or(v, "(devel)"), cmp.Or(c, "unknown")
}

// usageErrorf is a mistake in how the program was called or configured (a bad flag or file, a
// Redis that does not answer, a key name taken): exit status 2, as a service.ConfigError.
func usageErrorf(format string, a ...any) error {
	return &service.ConfigError{Err: fmt.Errorf(format, a...)}
}

// exitCode prints err in one line and says how the process ends.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "orderd: "+strings.ReplaceAll(err.Error(), "\n", "; "))
	if _, ok := errors.AsType[*service.ConfigError](err); ok {
		return 2
	}
	return 1
}

// synopses are the lines of usage of `orderd cmd …`.
func synopses(cmd string) (lines []string) {
	for _, l := range strings.Split(usage, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "orderd "+cmd+" ") {
			lines = append(lines, l)
		}
	}
	return lines
}

// subcommand returns args[0], one of the subcommands of `orderd group` usage lists; --help
// prints their synopses.
func subcommand(group string, args []string, stdout io.Writer) (string, error) {
	var names []string
	for _, l := range synopses(group) {
		names = append(names, strings.Fields(l)[2])
	}
	want := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	switch {
	case len(args) == 0:
		return "", usageErrorf("%s: want %s (orderd %s --help)", group, want, group)
	case slices.Contains([]string{"-h", "-help", "--help", "help"}, args[0]):
		fmt.Fprintf(stdout, "Usage:\n  %s\n\norderd %s SUBCOMMAND --help lists the flags of each.\n", strings.Join(synopses(group), "\n  "), group)
		return "", flag.ErrHelp
	case !slices.Contains(names, args[0]):
		return "", usageErrorf("%s: unknown subcommand %q (want %s)", group, args[0], want)
	}
	return args[0], nil
}

// parseFlags sets fs's flags, and the store's into sc unless nil, from args, wherever they
// stand among the command's arguments (at most nargs, returned), then from the ORDERD_*
// variables. An error names the flag as typed and the form it wants; --help goes to stdout.
func parseFlags(fs *flag.FlagSet, sc *service.StoreConfig, args []string, nargs int, getenv func(string) string, stdout io.Writer) ([]string, error) {
	if sc != nil {
		def := service.DefaultConfig().Store
		fs.StringVar(&sc.DB, "db", def.DB, "SQLite file of orders, pets and keys (the embedded mode; unused with --redis-url)")
		fs.StringVar(&sc.RedisURL, "redis-url", "", "Redis to share orders, keys, counters and bans through: redis://, rediss://, redis+cluster://, or ?master_name= for Sentinel (none: embedded mode)")
		fs.StringVar(&sc.RedisPrefix, "redis-prefix", def.RedisPrefix, "start of every Redis key, so that deployments can share a Redis")
		fs.DurationVar(&sc.RedisTimeout, "redis-timeout", def.RedisTimeout, "bound on each Redis call")
	}
	var rest []string
	given := map[string]bool{}
	for i := 0; i < len(args); i++ {
		typed, v, hasValue := strings.Cut(args[i], "=")
		name := strings.TrimLeft(typed, "-")
		f := fs.Lookup(name)
		if typed == "--" { // the rest are arguments, even those that start with a dash
			rest = append(rest, args[i+1:]...)
			break
		} else if !strings.HasPrefix(typed, "-") || typed == "-" {
			rest = append(rest, args[i])
			continue
		} else if name == "h" || name == "help" {
			printFlags(fs, stdout)
			return nil, flag.ErrHelp
		} else if f == nil {
			return nil, usageErrorf("%s: unknown flag %s", fs.Name(), typed)
		}
		b, _ := f.Value.(interface{ IsBoolFlag() bool })
		switch {
		case hasValue:
		case b != nil && b.IsBoolFlag():
			v = "true"
		case i+1 == len(args):
			return nil, usageErrorf("%s: %s needs a value", fs.Name(), typed)
		default:
			i++
			v = args[i]
		}
		if err := f.Value.Set(v); err != nil {
			return nil, usageErrorf("%s: %s: %s", fs.Name(), typed, wantValue(f, v, err))
		}
		given[f.Name] = true
	}
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if v := getenv(envName(f.Name)); v != "" && !given[f.Name] && err == nil {
			if e := f.Value.Set(v); e != nil {
				err = usageErrorf("%s: %s: %s", fs.Name(), envName(f.Name), wantValue(f, v, e))
			}
		}
	})
	switch {
	case err != nil:
	case len(rest) > nargs:
		err = usageErrorf("%s: unexpected argument %q", fs.Name(), rest[nargs])
	case sc != nil && sc.RedisURL != "" && redisstore.CheckURL(sc.RedisURL) != nil:
		err = usageErrorf("%s: --redis-url: %w", fs.Name(), redisstore.CheckURL(sc.RedisURL))
	case sc != nil && sc.RedisTimeout <= 0:
		err = usageErrorf("%s: --redis-timeout must be positive, not %s", fs.Name(), sc.RedisTimeout)
	}
	return rest, err
}

// wantValue says why v is no value of f: the form f wants, for the flag package's own kinds
// (whose errors say only "parse error"), else err.
func wantValue(f *flag.Flag, v string, err error) string {
	if g, ok := f.Value.(flag.Getter); ok && wants[fmt.Sprintf("%T", g.Get())] != "" {
		return fmt.Sprintf("want %s, not %q", wants[fmt.Sprintf("%T", g.Get())], v)
	}
	return fmt.Sprintf("invalid value %q: %v", v, err)
}

var wants = map[string]string{"time.Duration": "a duration like 15m, 30s or 1h30m", "int": "a whole number", "int64": "a whole number", "bool": "true or false", "*slog.Level": "debug, info, warn or error"}

// envName is the variable that backs a flag: --redis-url is ORDERD_REDIS_URL.
func envName(flagName string) string {
	return "ORDERD_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// printFlags prints a command's synopsis and its flags with their variables and defaults.
func printFlags(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprintf(w, "Usage: %s\n", synopses(fs.Name())[0])
	header := "\nFlags (each also read from its ORDERD_* variable):\n" // version has none
	fs.VisitAll(func(f *flag.Flag) {
		def := map[bool]string{true: " (default " + f.DefValue + ")"}[f.DefValue != ""]
		fmt.Fprintf(w, "%s  --%s  [%s]%s\n      %s\n", header, f.Name, envName(f.Name), def, f.Usage)
		header = ""
	})
}
