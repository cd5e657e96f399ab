package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/petstore/orderd/internal/jsonfile"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/redisstore"
	"github.com/petstore/orderd/internal/service"
	"github.com/petstore/orderd/internal/webhook"
)

// adminError is the failure of a command's store call: a name taken, a key or an endpoint
// not found or not in a state to change is the operator's to fix (exit status 2); a store
// failing at its work may not be (1).
func adminError(cmd string, err error) error {
	operators := []error{order.ErrNameTaken, order.ErrKeyNotFound, order.ErrEventsExpired, webhook.ErrNotFound, webhook.ErrActive, webhook.ErrMoved}
	if err == nil {
		return nil
	} else if slices.ContainsFunc(operators, func(target error) bool { return errors.Is(err, target) }) {
		return usageErrorf("%s: %w", cmd, err)
	}
	return fmt.Errorf("%s: %w", cmd, err)
}

// admin runs `orderd keys create|list|revoke`, `orderd webhooks create|list|delete|enable` and
// `orderd import`.
func admin(ctx context.Context, group string, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd, sub := group, "create" // an import makes the file as a create does
	if group != "import" {
		var err error
		if sub, err = subcommand(group, args, stdout); err != nil {
			return err
		}
		cmd, args = group+" "+sub, args[1:]
	}
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	var sc service.StoreConfig
	var planName, name, url, types, ordersFile, petsFile string
	var custom order.Limits
	var skipToNewest bool
	switch cmd { // each subcommand has only its own flags: the others take the store's alone
	case "import":
		fs.StringVar(&ordersFile, "orders", "", "JSON file of orders (an array of Order with status); required")
		fs.StringVar(&petsFile, "pets", "", "JSON file of pets (an array of Pet)")
	case "keys create":
		fs.StringVar(&planName, "plan", "", "free, pro, business or enterprise; required")
		fs.Int64Var(&custom.PerMinute, "per-minute", 0, fmt.Sprintf("enterprise only: requests per UTC minute, 1 to %d", order.MaxLimit))
		fs.Int64Var(&custom.PerDay, "per-day", 0, fmt.Sprintf("enterprise only: requests per UTC day, 1 to %d", order.MaxLimit))
		fs.StringVar(&name, "name", "", fmt.Sprintf("a name for the key: 1 to %d bytes of printable text, not starting osk_ (default: key-<prefix>)", order.MaxNameLen))
	case "webhooks create":
		fs.StringVar(&url, "url", "", "where the events are posted: http or https; required")
		fs.StringVar(&types, "types", "", "comma-separated event types to send (default: every type: "+webhook.JoinTypes(order.EventTypes)+")")
	case "webhooks enable":
		fs.BoolVar(&skipToNewest, "skip-to-newest", false, "resume after the log's newest event, not after the endpoint's position: the events in between are never sent (for a position whose events the log no longer keeps)")
	}
	want := map[string]string{"keys revoke": "key to revoke, by name or prefix", "webhooks delete": "endpoint to delete, by id", "webhooks enable": "endpoint to enable, by id"}[cmd]
	rest, err := parseFlags(fs, &sc, args, min(len(want), 1), getenv, stdout)
	if err != nil {
		return err
	}
	// What a create writes is checked before the store is opened, which may create the file.
	p, planErr := order.ParsePlan(planName)
	_, limitsErr := order.LimitsFor(p, custom)
	typeList := webhook.SplitTypes(types)
	_, endpointErr := webhook.NewEndpoint(url, typeList, "", time.Now())
	switch {
	case want != "" && len(rest) == 0:
		return usageErrorf("%s: name one %s", cmd, want)
	case cmd == "keys create" && planName == "":
		return usageErrorf("keys create: --plan is required: free, pro, business or enterprise")
	case cmd == "keys create" && planErr != nil:
		return usageErrorf("keys create: --plan: %w", planErr)
	case cmd == "keys create" && limitsErr != nil:
		return usageErrorf("keys create: %w", limitsErr)
	case cmd == "keys create" && name != "" && order.CheckName(name) != nil:
		return usageErrorf("keys create: --name: %w", order.CheckName(name))
	case cmd == "webhooks create" && endpointErr != nil:
		return usageErrorf("webhooks create: %w", endpointErr)
	case cmd == "import" && ordersFile == "":
		return usageErrorf("import: --orders is required")
	}
	// An import's files are checked before the store (which it may create) is opened, then read
	// again as they are written, never held whole; the first record refused is named by file:line:column.
	var orders order.Batches[order.Order] = jsonfile.File[order.Order](ordersFile, service.ImportBatch)
	pets := order.Slice[order.Pet](nil, 1)
	if petsFile != "" {
		pets = jsonfile.File[order.Pet](petsFile, service.ImportBatch)
	}
	var nOrders, nPets int
	if cmd == "import" {
		err = cmp.Or(orders(order.CheckEach[order.Order](), func(b []order.Order) error { nOrders += len(b); return nil }),
			pets(order.CheckEach[order.Pet](), func(b []order.Pet) error { nPets += len(b); return nil }))
	}
	if err != nil {
		return &service.ConfigError{Err: err}
	}
	// A failure is the command's one line on stderr; go-redis's own lines would repeat it. Only a
	// create or an import makes a missing file: a list or a revoke in a mistyped path is an error.
	redisstore.SetLogger(slog.New(slog.DiscardHandler))
	sc.CreateDB = sub == "create"
	stores, err := service.OpenStores(sc)
	if err != nil {
		return err
	}
	defer stores.Close()
	if sc.RedisURL != "" { // unlike serve, these need Redis to answer now
		if err := stores.Ready(ctx); err != nil {
			return usageErrorf("redis does not answer at the given --redis-url: %v", err)
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0) // the lists' columns, printed once all is read
	switch cmd {
	case "import":
		// The decoding goes a batch or two ahead of the writes, in a goroutine of its own.
		n, err := stores.ImportBatches(ctx, order.ReadAhead(orders, 2), order.ReadAhead(pets, 2))
		if err == nil && sc.RedisURL != "" {
			fmt.Fprintf(stderr, "imported %d orders (%d fields changed) and %d pets\n", nOrders, n.OrderFieldsChanged, nPets)
		} else if err == nil {
			fmt.Fprintf(stderr, "imported %d orders (%d added, %d updated) and %d pets (%d added, %d updated) into %s\n",
				nOrders, n.OrdersAdded, n.OrdersUpdated, nPets, n.PetsAdded, n.PetsUpdated, sc.DB)
		}
		return err
	case "keys create":
		key, rec, err := order.NewKey(name, p, custom, time.Now())
		if rec.Name == "" {
			rec.Name = order.DefaultName(rec.Prefix)
		}
		if err = cmp.Or(err, stores.Keys.Add(ctx, rec)); err != nil {
			return adminError(cmd, err)
		}
		// The key alone on stdout, so that scripts can capture it; it is never shown again.
		fmt.Fprintln(stdout, key)
		fmt.Fprintf(stderr, "created key %q (plan %s, prefix %s); it is shown only this once\n", rec.Name, rec.Plan, rec.Prefix)
	case "keys list":
		var list []order.Key
		list, err = stores.Keys.List(ctx)
		fmt.Fprintln(tw, "NAME\tPLAN\tPER-MINUTE\tPER-DAY\tPREFIX\tCREATED")
		for _, k := range list {
			l, name := k.Limits(), k.Name
			if !order.Printable(name) { // stored before CheckName: quoted, so it cannot break or fake a row
				name = strconv.Quote(name)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", name, k.Plan, l.PerMinute, l.PerDay, k.Prefix, k.CreatedAt.Format(time.RFC3339))
		}
	case "keys revoke":
		var k order.Key
		if k, err = stores.Keys.Revoke(ctx, rest[0]); err == nil {
			fmt.Fprintf(stdout, "revoked key %q (prefix %s)\n", k.Name, k.Prefix)
		}
	case "webhooks create":
		var e webhook.Endpoint
		if e, err = webhook.Create(ctx, stores.Webhooks, stores.Events, url, typeList, time.Now()); err == nil {
			// The id and the secret alone on stdout, for scripts; the secret is never shown again.
			fmt.Fprintf(stdout, "%s %s\n", e.ID, e.Secret)
			fmt.Fprintf(stderr, "created webhook %s for %s, sent the events after %s; its secret is shown only this once\n", e.ID, e.URL, e.Position)
		}
	case "webhooks list": // each endpoint, where its delivery stands and how far behind the log it is
		var list []webhook.Endpoint
		list, err = stores.Webhooks.List(ctx)
		fmt.Fprintln(tw, "ID\tURL\tTYPES\tSTATUS\tLAST\tATTEMPTS\tBEHIND\tERROR")
		for _, e := range list {
			b, err := webhook.BacklogOf(ctx, stores.Events, e)
			if err != nil {
				return adminError(cmd, fmt.Errorf("the log: %w", err))
			}
			types, last, behind := "all", "-", counted(b)
			if len(e.Types) > 0 {
				types = webhook.JoinTypes(e.Types)
			}
			if e.LastStatus != 0 {
				last = strconv.Itoa(e.LastStatus)
			} else if !e.LastAttempt.IsZero() {
				last = "error"
			}
			if b.Expired != nil { // how many events it has yet to get and since when, e.g. "3 (2m5s)"
				behind = "expired"
			} else if b.Events > 0 {
				behind += fmt.Sprintf(" (%s)", time.Since(b.Oldest).Round(time.Second))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", e.ID, e.URL, types, e.Status, last, e.Attempts, behind, e.LastError)
		}
	case "webhooks enable":
		var r webhook.Enabled
		if r, err = webhook.Enable(ctx, stores.Webhooks, stores.Events, rest[0], skipToNewest); err == nil && skipToNewest {
			fmt.Fprintf(stdout, "enabled webhook %s from the log's newest event, %s; skipped the events after %s: %s of its types the log still kept, and any it no longer kept\n", rest[0], r.To, r.From, counted(r.Backlog))
		} else if err == nil {
			fmt.Fprintf(stdout, "enabled webhook %s: delivery resumes after %s, with %s events of its types waiting\n", rest[0], r.To, counted(r.Backlog))
		} else if errors.Is(err, order.ErrEventsExpired) {
			err = fmt.Errorf("%w; the events in between are lost to it: --skip-to-newest enables it from the log's newest event, skipping them", err)
		}
	case "webhooks delete":
		if err = webhook.Delete(ctx, stores.Webhooks, rest[0]); err == nil {
			fmt.Fprintf(stdout, "deleted webhook %s\n", rest[0])
		}
	}
	if err == nil {
		err = tw.Flush()
	}
	return adminError(cmd, err)
}

// counted is how many events b has: "3", or "10000+".
func counted(b webhook.Backlog) string {
	return strconv.Itoa(b.Events) + map[bool]string{true: "+"}[b.More]
}
