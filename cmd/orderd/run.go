package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/petstore/orderd/internal/service"
)

// usage is `orderd help`: the commands and what every command shares.
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
	case "keys":
		return keys(ctx, rest, getenv, stdout, stderr)
	case "webhooks":
		return webhooks(ctx, rest, getenv, stdout, stderr)
	case "import":
		return importData(ctx, rest, getenv, stdout, stderr)
	case "version", "--version", "-version":
		fs := flag.NewFlagSet("version", flag.ContinueOnError)
		fs.Usage = flagUsage(fs, "orderd version")
		rest, err := parseFlags(fs, rest, getenv, stdout)
		if err != nil {
			return err
		}
		if len(rest) > 0 {
			return usageErrorf("version: unexpected argument %q", rest[0])
		}
		printVersion(stdout)
		return nil
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

// usageError is a mistake in how the program was called or configured (a bad flag or file, a
// Redis that does not answer, a key name taken or not found): exit status 2, not 1.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usageErrorf(format string, a ...any) error {
	return usageError{fmt.Errorf(format, a...)}
}

// exitCode prints err in one line and says how the process ends.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "orderd: "+strings.ReplaceAll(err.Error(), "\n", "; "))
	var ue usageError
	var ce *service.ConfigError
	if errors.As(err, &ue) || errors.As(err, &ce) {
		return 2
	}
	return 1
}

// parseFlags parses args into fs, fills every flag not given from its ORDERD_* variable, and
// returns the arguments that are not flags, wherever they stood. Help goes to stdout.
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string, stdout io.Writer) ([]string, error) {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(stdout)
				fs.Usage()
				return nil, err
			}
			return nil, usageErrorf("%s: %s", fs.Name(), flagError(fs, args, err))
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := envName(f.Name)
		if v := getenv(name); v != "" && !set[f.Name] && err == nil {
			if e := f.Value.Set(v); e != nil {
				err = usageErrorf("%s: %s: %s", fs.Name(), name, wantValue(f, v, e))
			}
		}
	})
	return positional, err
}

// flagParseErrors are the flag package's errors, which name a flag by one dash; the groups
// are the value, if any, the flag's name and the value's own error.
var flagParseErrors = regexp.MustCompile(`^(?:flag provided but not defined|flag needs an argument): -(.*)$()()|^invalid (?:boolean )?value (".*") for (?:flag )?-([^:]*): (.*)$`)

// flagError says err of the flag package again naming the flag as it was typed (--bogus, not
// -bogus) and, for a bad value, the form it wants.
func flagError(fs *flag.FlagSet, args []string, err error) string {
	m := flagParseErrors.FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error()
	}
	name, typed := m[1]+m[5], "--"+m[1]+m[5]
	if slices.ContainsFunc(args, func(a string) bool { return a == "-"+name || strings.HasPrefix(a, "-"+name+"=") }) {
		typed = "-" + name
	}
	switch f := fs.Lookup(name); {
	case f == nil:
		return "unknown flag " + typed
	case m[4] == "":
		return typed + " needs a value"
	default:
		v, _ := strconv.Unquote(m[4])
		return typed + ": " + wantValue(f, v, errors.New(m[6]))
	}
}

// wantValue says why v is no value of f: the form f wants, for the flag package's own kinds
// (whose errors say only "parse error"), else err.
func wantValue(f *flag.Flag, v string, err error) string {
	if g, ok := f.Value.(flag.Getter); ok && wants[fmt.Sprintf("%T", g.Get())] != "" {
		return fmt.Sprintf("want %s, not %q", wants[fmt.Sprintf("%T", g.Get())], v)
	}
	return fmt.Sprintf("invalid value %q: %v", v, err)
}

var wants = map[string]string{"time.Duration": "a duration like 15m, 30s or 1h30m", "int": "a whole number", "int64": "a whole number",
	"bool": "true or false", "*slog.Level": "debug, info, warn or error"}

// envName is the variable that backs a flag: --redis-url is ORDERD_REDIS_URL.
func envName(flagName string) string {
	return "ORDERD_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// flagUsage prints a command's synopsis and its flags with their variables and defaults.
func flagUsage(fs *flag.FlagSet, synopsis string) func() {
	return func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: %s\n", synopsis)
		header := "\nFlags (each also read from its ORDERD_* variable):\n" // version has none
		fs.VisitAll(func(f *flag.Flag) {
			fmt.Fprint(w, header)
			header = ""
			def := ""
			if f.DefValue != "" {
				def = fmt.Sprintf(" (default %s)", f.DefValue)
			}
			fmt.Fprintf(w, "  --%s  [%s]%s\n      %s\n", f.Name, envName(f.Name), def, f.Usage)
		})
	}
}
