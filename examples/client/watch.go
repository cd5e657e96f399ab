package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/petstore/orderd/examples/client/orderclientv2"
)

const watchUsageText = `Usage: client watch [--base URL] [--key KEY] [--type T]... [--after ID]

Follows the order events of version 2 as they happen, one line per event:
  id type orderId status
from the stream of GET /store/events (Accept: text/event-stream). When the
connection drops or the server restarts, it connects again and resumes after
the last event it printed (Last-Event-ID): nothing lost, nothing repeated.

Without --after it starts from now: it reads the orders (every page of a find)
and follows the events after their Orders-Event-Id. When the service no longer
keeps the events after its position (410 events_expired) it does the same,
printing "resync: N orders, following from ID". It runs until interrupted.

Flags:
`

// watchOptions are the parsed command line of `client watch`.
type watchOptions struct {
	base, key, after string
	types            []orderclientv2.EventType
}

func parseWatchFlags(args []string, getenv func(string) string, stderr io.Writer) (watchOptions, error) {
	var o watchOptions
	fs := flag.NewFlagSet("client watch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usage(fs, watchUsageText)
	fs.StringVar(&o.base, "base", defaultBase, baseUsage)
	fs.StringVar(&o.key, "key", "", "API key (default: $ORDERD_KEY); required")
	fs.StringVar(&o.after, "after", "", "follow the events after this event id (default: from now)")
	fs.Func("type", "keep events of this type, e.g. order.cancelled (repeatable)", func(s string) error {
		t := orderclientv2.EventType(s)
		if !t.Valid() {
			return fmt.Errorf("%q is not an event type", s)
		}
		o.types = append(o.types, t)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return o, err
		}
		return o, usageError{err.Error()}
	}
	if o.key == "" {
		o.key = getenv("ORDERD_KEY")
	}
	switch {
	case fs.NArg() > 0:
		return o, usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	case o.key == "":
		return o, usageError{"no API key: pass --key or set ORDERD_KEY"}
	}
	return o, nil
}

// reconnectAfter bounds the wait before connecting again after a drop; it doubles from 1 s.
const reconnectAfter = 30 * time.Second

// runWatch follows the stream until ctx ends; ctx's end is a clean exit.
func runWatch(ctx context.Context, doer orderclientv2.HttpRequestDoer, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, err := parseWatchFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	client, err := orderclientv2.NewClientWithResponses(strings.TrimRight(o.base, "/")+"/v2",
		orderclientv2.WithHTTPClient(doer),
		orderclientv2.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+o.key)
			return nil
		}),
	)
	if err != nil {
		return usageError{fmt.Sprintf("--base %q: %v", o.base, err)}
	}
	last := o.after
	for wait := time.Second; ; {
		if last == "" {
			if last, err = resync(ctx, client, stdout); err != nil {
				return ignoreEnd(ctx, err)
			}
		}
		got, err := follow(ctx, client, o.types, last, stdout)
		if got != "" {
			last, wait = got, time.Second // it worked for a while: the next drop waits little
		}
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, errExpired):
			last = "" // read the orders again
			continue
		case err != nil:
			fmt.Fprintf(stderr, "client: stream: %v; connecting again in %s\n", err, wait)
		}
		if err := sleep(ctx, wait); err != nil {
			return nil
		}
		wait = min(2*wait, reconnectAfter)
	}
}

var errExpired = errors.New("the events after our position are no longer kept")

// resync reads every order (printing how many) and returns the Orders-Event-Id of the first
// page, read before it: every change the walk does not show has an event after it.
func resync(ctx context.Context, client *orderclientv2.ClientWithResponses, stdout io.Writer) (string, error) {
	from, n := "", 0
	for params := (orderclientv2.FindOrdersParams{PageSize: ptr(int32(1000))}); ; {
		res, err := client.FindOrdersWithResponse(ctx, &params)
		if err != nil {
			return "", fmt.Errorf("find orders: %w", err)
		}
		if res.StatusCode() != http.StatusOK || res.JSON200 == nil {
			return "", fmt.Errorf("find orders: %w", apiError(res.HTTPResponse, res.Body, asV1(
				res.JSON400, res.JSON401, res.JSON429, res.JSON500, res.JSON503, res.JSONDefault)...))
		}
		if from == "" {
			from = res.HTTPResponse.Header.Get("Orders-Event-Id")
		}
		n += len(res.JSON200.Orders)
		if res.JSON200.NextPageToken == nil {
			break
		}
		params.PageToken = res.JSON200.NextPageToken
	}
	fmt.Fprintf(stdout, "resync: %d orders, following from %s\n", n, from)
	return from, nil
}

// follow reads one connection of the stream after the event id after, printing each event,
// and returns the id of the last one printed ("" for none) and why the stream ended.
func follow(ctx context.Context, client *orderclientv2.ClientWithResponses, types []orderclientv2.EventType, after string, stdout io.Writer) (string, error) {
	params := orderclientv2.ListEventsParams{LastEventID: &after}
	if len(types) > 0 {
		params.Type = &types
	}
	res, err := client.ListEvents(ctx, &params, func(_ context.Context, req *http.Request) error {
		req.Header.Set("Accept", "text/event-stream")
		return nil
	})
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(res.Body)
		var e orderclientv2.Error
		if json.Unmarshal(body, &e) == nil && e.Code == orderclientv2.ErrorCodeEventsExpired {
			return "", errExpired
		}
		return "", fmt.Errorf("%s: %s", res.Status, strings.TrimSpace(string(body)))
	}
	last := ""
	var id, data string
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		field, value, _ := strings.Cut(line, ": ")
		switch {
		case line == "" && data != "":
			var e orderclientv2.Event
			if err := json.Unmarshal([]byte(data), &e); err != nil {
				return last, fmt.Errorf("event %s: %w", id, err)
			}
			fmt.Fprintf(stdout, "%s %s %d %s\n", e.Id, e.Type, e.Order.Id, e.Order.Status)
			last, data = id, ""
		case field == "id":
			id = value
		case field == "data":
			data = value
		}
	}
	if err := sc.Err(); err != nil {
		return last, err
	}
	return last, io.ErrUnexpectedEOF // the server ended it: it shuts down, or the log failed
}

// ignoreEnd is err, unless ctx ended: an interrupt is a clean exit.
func ignoreEnd(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// isWatch reports whether args start with the watch subcommand, and the rest.
func isWatch(args []string) (bool, []string) {
	if len(args) > 0 && strings.EqualFold(args[0], "watch") {
		return true, args[1:]
	}
	return false, args
}
