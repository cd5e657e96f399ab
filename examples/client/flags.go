package main

import (
	"flag"
	"fmt"
	"io"
)

const usageText = `Usage: client [--base URL] [--key KEY] [--cancel ID]
       client find [flags]   (version 2: see client find --help)
       client watch [flags]  (version 2's order events: see client watch --help)

Lists the orders of the Store Order Service, one line per order:
  id status petId quantity shipDate
then a count line. With --cancel ID it first cancels order ID, printing
"cancelled order ID", then lists. 429 and 503 answers are retried after their
Retry-After plus exponential backoff with jitter, up to 5 attempts; an answer
whose Retry-After is over a minute (a ban, a spent day) is reported at once.

Exit status: 0 on success; 1 when the service refuses (a cancel answered
404 order_not_found or 409 order_already_shipped included: the order was not
cancelled, so a script must not carry on as if it were) or cannot be reached;
2 on a usage error.

Flags:
`

// defaultBase and baseUsage are --base's default and help: the service's root URL, as
// orderd serve --addr makes it; each command adds its version's path.
const (
	defaultBase = "http://127.0.0.1:8080"
	baseUsage   = "the service's root URL (the client adds /v1 or /v2)"
)

// usage prints text, then the flags with their double dash, as they are written.
func usage(fs *flag.FlagSet, text string) func() {
	return func() {
		fmt.Fprint(fs.Output(), text)
		fs.VisitAll(func(f *flag.Flag) {
			fmt.Fprintf(fs.Output(), "  --%s\n    \t%s", f.Name, f.Usage)
			if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "-1" {
				fmt.Fprintf(fs.Output(), " (default %s)", f.DefValue)
			}
			fmt.Fprintln(fs.Output())
		})
	}
}

// options are the parsed command line.
type options struct {
	base      string
	key       string
	cancel    int64
	hasCancel bool // ids start at 0, so no value of cancel can mean "not given"
}

// usageError is a mistake on the command line, as opposed to a refusal by the service.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// parseFlags reads args; the key falls back to ORDERD_KEY so that it need not appear in
// the process list or the shell history.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usage(fs, usageText)
	fs.StringVar(&o.base, "base", defaultBase, baseUsage)
	// Not getenv as the flag's default: -h prints defaults, and would print the key.
	fs.StringVar(&o.key, "key", "", "API key (default: $ORDERD_KEY); required")
	fs.Int64Var(&o.cancel, "cancel", 0, "cancel the order with this id before listing")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return o, err
		}
		return o, usageError{err.Error()}
	}
	fs.Visit(func(f *flag.Flag) { o.hasCancel = o.hasCancel || f.Name == "cancel" })
	if o.key == "" {
		o.key = getenv("ORDERD_KEY")
	}
	switch {
	case fs.NArg() > 0:
		return o, usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	case o.key == "":
		return o, usageError{"no API key: pass --key or set ORDERD_KEY"}
	case o.base == "":
		return o, usageError{"--base must not be empty"}
	case o.hasCancel && o.cancel < 0:
		return o, usageError{fmt.Sprintf("--cancel %d: order ids are from 0 to 9223372036854775807", o.cancel)}
	}
	return o, nil
}
