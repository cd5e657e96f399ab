package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/service"
)

// keysSynopses are the synopses of the keys subcommands, in the order of keys --help.
var keysSynopses = []string{
	"orderd keys create --plan PLAN [--per-minute N --per-day N] [--name NAME] [--db FILE | --redis-url URL]",
	"orderd keys list [--db FILE | --redis-url URL]",
	"orderd keys revoke NAME|PREFIX [--db FILE | --redis-url URL]",
}

// keys runs `orderd keys create|list|revoke`.
func keys(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	i, err := subcommand("keys", keysSynopses, args, stdout)
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("keys "+args[0], flag.ContinueOnError)
	var (
		sc             service.StoreConfig
		planName, name string
		p              order.Plan
		custom         order.Limits
	)
	// Each subcommand has only its own flags: list and revoke take the store's alone.
	if args[0] == "create" {
		fs.StringVar(&planName, "plan", "", "free, pro, business or enterprise; required")
		fs.Int64Var(&custom.PerMinute, "per-minute", 0, fmt.Sprintf("enterprise only: requests per UTC minute, 1 to %d", order.MaxLimit))
		fs.Int64Var(&custom.PerDay, "per-day", 0, fmt.Sprintf("enterprise only: requests per UTC day, 1 to %d", order.MaxLimit))
		fs.StringVar(&name, "name", "", fmt.Sprintf("a name for the key: 1 to %d bytes of printable text, not starting osk_ (default: key-<prefix>)", order.MaxNameLen))
	}
	registerStore(fs, &sc)
	fs.Usage = flagUsage(fs, keysSynopses[i])
	rest, err := parseFlags(fs, args[1:], getenv, stdout)
	if err != nil {
		return err
	}
	if err := checkStoreFlags(fs.Name(), sc); err != nil {
		return err
	}
	if args[0] != "revoke" && len(rest) > 0 {
		return usageErrorf("%s: unexpected argument %q", fs.Name(), rest[0])
	}
	// The plan and the name are checked before the store is opened, which may create the file.
	if args[0] == "create" {
		if planName == "" {
			return usageErrorf("keys create: --plan is required: free, pro, business or enterprise")
		}
		if p, err = order.ParsePlan(planName); err != nil {
			return usageErrorf("keys create: --plan: %w", err)
		}
		if _, err := order.LimitsFor(p, custom); err != nil {
			return usageErrorf("keys create: %w", err)
		}
		if name != "" {
			if err := order.CheckName(name); err != nil {
				return usageErrorf("keys create: --name: %w", err)
			}
		}
	}
	// Only create makes a missing file: listing or revoking in a mistyped path is an error.
	sc.CreateDB = args[0] == "create"
	stores, err := openStores(ctx, sc)
	if err != nil {
		return err
	}
	defer stores.Close()
	switch args[0] {
	case "create":
		key, rec, err := order.NewKey(name, p, custom, time.Now())
		if err != nil {
			return err
		}
		if rec.Name == "" {
			rec.Name = order.DefaultName(rec.Prefix)
		}
		if err := stores.Keys.Add(ctx, rec); err != nil {
			return keysError("create", err)
		}
		// The key alone on stdout, so that scripts can capture it; it is never shown again.
		fmt.Fprintln(stdout, key)
		fmt.Fprintf(stderr, "created key %q (plan %s, prefix %s); it is shown only this once\n", rec.Name, rec.Plan, rec.Prefix)
		return nil
	case "list":
		list, err := stores.Keys.List(ctx)
		if err != nil {
			return keysError("list", err)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tPLAN\tPER-MINUTE\tPER-DAY\tPREFIX\tCREATED")
		for _, k := range list {
			l := k.Limits()
			name := k.Name
			if !order.Printable(name) { // stored before CheckName: quoted, so it cannot break or fake a row
				name = strconv.Quote(name)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", name, k.Plan, l.PerMinute, l.PerDay, k.Prefix, k.CreatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	default: // revoke
		if len(rest) != 1 {
			return usageErrorf("keys revoke: name one key to revoke, by name or prefix")
		}
		k, err := stores.Keys.Revoke(ctx, rest[0])
		if err != nil {
			return keysError("revoke", err)
		}
		fmt.Fprintf(stdout, "revoked key %q (prefix %s)\n", k.Name, k.Prefix)
		return nil
	}
}

// keysError is the failure of a keys command's store call: a name taken or a key not found
// is the operator's to fix (exit status 2); a store failing at its work may not be (1).
func keysError(cmd string, err error) error {
	if errors.Is(err, order.ErrNameTaken) || errors.Is(err, order.ErrKeyNotFound) {
		return usageErrorf("keys %s: %w", cmd, err)
	}
	return fmt.Errorf("keys %s: %w", cmd, err)
}
