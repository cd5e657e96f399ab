package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/service"
	"github.com/petstore/orderd/internal/webhook"
)

// webhooksSynopses are the synopses of the webhooks subcommands, in the order of webhooks --help.
var webhooksSynopses = []string{
	"orderd webhooks create --url URL [--types TYPE,…] [--db FILE | --redis-url URL]",
	"orderd webhooks list [--db FILE | --redis-url URL]",
	"orderd webhooks delete ID [--db FILE | --redis-url URL]",
	"orderd webhooks enable ID [--skip-to-newest] [--db FILE | --redis-url URL]",
}

// webhooks runs `orderd webhooks create|list|delete|enable`.
func webhooks(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	i, err := subcommand("webhooks", webhooksSynopses, args, stdout)
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("webhooks "+args[0], flag.ContinueOnError)
	var (
		sc           service.StoreConfig
		url, types   string
		skipToNewest bool
	)
	switch args[0] {
	case "create":
		fs.StringVar(&url, "url", "", "where the events are posted: http or https; required")
		fs.StringVar(&types, "types", "", "comma-separated event types to send (default: every type: "+webhook.JoinTypes(order.EventTypes)+")")
	case "enable":
		fs.BoolVar(&skipToNewest, "skip-to-newest", false, "resume after the log's newest event, not after the endpoint's position: "+
			"the events in between are never sent (for a position whose events the log no longer keeps)")
	}
	registerStore(fs, &sc)
	fs.Usage = flagUsage(fs, webhooksSynopses[i])
	rest, err := parseFlags(fs, args[1:], getenv, stdout)
	if err != nil {
		return err
	}
	if err := checkStoreFlags(fs.Name(), sc); err != nil {
		return err
	}
	byID := args[0] == "delete" || args[0] == "enable"
	switch {
	case !byID && len(rest) > 0:
		return usageErrorf("%s: unexpected argument %q", fs.Name(), rest[0])
	case byID && len(rest) != 1:
		return usageErrorf("%s: name one endpoint to %s, by id", fs.Name(), args[0])
	}
	typeList := webhook.SplitTypes(types)
	if args[0] == "create" { // checked before the store is opened, which may create the file
		if _, err := webhook.NewEndpoint(url, typeList, "", time.Now()); err != nil {
			return usageErrorf("webhooks create: %w", err)
		}
	}
	sc.CreateDB = args[0] == "create"
	stores, err := openStores(ctx, sc)
	if err != nil {
		return err
	}
	defer stores.Close()
	switch args[0] {
	case "create":
		e, err := webhook.Create(ctx, stores.Webhooks, stores.Events, url, typeList, time.Now())
		if err != nil {
			return fmt.Errorf("webhooks create: %w", err)
		}
		// The id and the secret alone on stdout, for scripts; the secret is never shown again.
		fmt.Fprintf(stdout, "%s %s\n", e.ID, e.Secret)
		fmt.Fprintf(stderr, "created webhook %s for %s, sent the events after %s; its secret is shown only this once\n", e.ID, e.URL, e.Position)
	case "list":
		err = listWebhooks(ctx, stores, stdout)
	case "enable":
		var r webhook.Enabled
		if r, err = webhook.Enable(ctx, stores.Webhooks, stores.Events, rest[0], skipToNewest); err == nil && skipToNewest {
			fmt.Fprintf(stdout, "enabled webhook %s from the log's newest event, %s; skipped the events after %s: %s of its types the log still kept, "+
				"and any it no longer kept\n", rest[0], r.To, r.From, counted(r.Backlog))
		} else if err == nil {
			fmt.Fprintf(stdout, "enabled webhook %s: delivery resumes after %s, with %s events of its types waiting\n", rest[0], r.To, counted(r.Backlog))
		} else if errors.Is(err, order.ErrEventsExpired) {
			err = fmt.Errorf("%w; the events in between are lost to it: --skip-to-newest enables it from the log's newest event, skipping them", err)
		}
	default: // delete
		if err = webhook.Delete(ctx, stores.Webhooks, rest[0]); err == nil {
			fmt.Fprintf(stdout, "deleted webhook %s\n", rest[0])
		}
	}
	if errors.Is(err, webhook.ErrNotFound) || errors.Is(err, webhook.ErrActive) || errors.Is(err, webhook.ErrMoved) || errors.Is(err, order.ErrEventsExpired) {
		return usageErrorf("%s: %w", fs.Name(), err)
	} else if err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	return nil
}

// counted is how many events b has: "3", or "10000+".
func counted(b webhook.Backlog) string {
	if b.More {
		return fmt.Sprintf("%d+", b.Events)
	}
	return fmt.Sprint(b.Events)
}

// listWebhooks prints each endpoint, where its delivery stands and how far behind the log it is.
func listWebhooks(ctx context.Context, stores *service.Stores, stdout io.Writer) error {
	list, err := stores.Webhooks.List(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tURL\tTYPES\tSTATUS\tLAST\tATTEMPTS\tBEHIND\tERROR")
	for _, e := range list {
		b, err := webhook.BacklogOf(ctx, stores.Events, e)
		if err != nil {
			return fmt.Errorf("the log: %w", err)
		}
		types, last, behind := "all", "-", counted(b)
		if len(e.Types) > 0 {
			types = webhook.JoinTypes(e.Types)
		}
		switch {
		case e.LastStatus != 0:
			last = fmt.Sprint(e.LastStatus)
		case !e.LastAttempt.IsZero():
			last = "error"
		}
		switch { // how many events it has yet to get and since when, e.g. "3 (2m5s)"
		case b.Expired != nil:
			behind = "expired"
		case b.Events > 0:
			behind += fmt.Sprintf(" (%s)", time.Since(b.Oldest).Round(time.Second))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", e.ID, e.URL, types, e.Status, last, e.Attempts, behind, e.LastError)
	}
	return tw.Flush()
}
