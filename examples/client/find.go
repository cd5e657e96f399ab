package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/petstore/orderd/examples/client/orderclient"
	"github.com/petstore/orderd/examples/client/orderclientv2"
)

const findUsageText = `Usage: client find [--base URL] [--key KEY] [--status S]... [--pet ID]
                   [--ship-from TIME] [--ship-before TIME] [--page-size N]

Finds orders through version 2 of the API and walks every page of the find,
printing one line per order (id status petId quantity shipDate), then a count
line. Filters combine with AND; --status may be repeated. TIME is RFC 3339
(2026-11-20T00:00:00Z); --ship-from is inclusive, --ship-before exclusive.

A page may hold fewer orders than --page-size, even none, and still not be the
last: the walk ends only on a page without a nextPageToken. 429 and 503 answers
are retried as for the list (Retry-After plus backoff with jitter).

Flags:
`

// findOptions are the parsed command line of `client find`.
type findOptions struct {
	base, key string
	params    orderclientv2.FindOrdersParams
}

// parseFindFlags reads the flags of `client find`; the key falls back to ORDERD_KEY.
func parseFindFlags(args []string, getenv func(string) string, stderr io.Writer) (findOptions, error) {
	var o findOptions
	fs := flag.NewFlagSet("client find", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usage(fs, findUsageText)
	fs.StringVar(&o.base, "base", defaultBase, baseUsage)
	fs.StringVar(&o.key, "key", "", "API key (default: $ORDERD_KEY); required")
	fs.Func("status", "keep orders in this state: pending, shipped or cancelled (repeatable)", func(s string) error {
		st := orderclientv2.FindOrdersParamsStatus(s)
		if !st.Valid() {
			return fmt.Errorf("%q is not pending, shipped or cancelled", s)
		}
		o.params.Status = ptr(append(deref(o.params.Status), st))
		return nil
	})
	var pet int64
	fs.Int64Var(&pet, "pet", -1, "keep orders of this pet id")
	from := fs.String("ship-from", "", "keep orders shipped at or after this RFC 3339 time")
	before := fs.String("ship-before", "", "keep orders shipped before this RFC 3339 time")
	size := fs.Int("page-size", 0, "orders per page, 1 to 1000 (default: the service's, 100)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return o, err
		}
		return o, usageError{err.Error()}
	}
	if o.key == "" {
		o.key = getenv("ORDERD_KEY")
	}
	if fs.NArg() > 0 {
		return o, usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if o.key == "" {
		return o, usageError{"no API key: pass --key or set ORDERD_KEY"}
	}
	if pet >= 0 {
		o.params.PetId = &pet
	} else if pet != -1 {
		return o, usageError{fmt.Sprintf("--pet %d: pet ids are from 0 to 9223372036854775807", pet)}
	}
	for _, t := range []struct {
		flag, value string
		into        **time.Time
	}{{"--ship-from", *from, &o.params.ShipDateFrom}, {"--ship-before", *before, &o.params.ShipDateBefore}} {
		if t.value == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, t.value)
		if err != nil {
			return o, usageError{fmt.Sprintf("%s %q: not an RFC 3339 time", t.flag, t.value)}
		}
		*t.into = &at
	}
	if *size != 0 {
		if *size < 1 || *size > 1000 {
			return o, usageError{fmt.Sprintf("--page-size %d: from 1 to 1000", *size)}
		}
		o.params.PageSize = ptr(int32(*size))
	}
	return o, nil
}

// runFind walks every page of the find that args describe.
func runFind(ctx context.Context, doer orderclientv2.HttpRequestDoer, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, err := parseFindFlags(args, getenv, stderr)
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
	n := 0
	for params := o.params; ; {
		res, err := client.FindOrdersWithResponse(ctx, &params)
		if err != nil {
			return fmt.Errorf("find orders: %w", err)
		}
		if res.StatusCode() != http.StatusOK || res.JSON200 == nil {
			return fmt.Errorf("find orders: %w", apiError(res.HTTPResponse, res.Body, asV1(
				res.JSON400, res.JSON401, res.JSON429, res.JSON500, res.JSON503, res.JSONDefault)...))
		}
		for _, ord := range res.JSON200.Orders {
			fmt.Fprintf(stdout, "%d %s %d %d %s\n", ord.Id, ord.Status, ord.PetId, ord.Quantity, ord.ShipDate.UTC().Format(time.RFC3339Nano))
		}
		n += len(res.JSON200.Orders)
		// Only the token's absence ends the walk: an empty page may have one.
		if res.JSON200.NextPageToken == nil {
			break
		}
		params.PageToken = res.JSON200.NextPageToken
	}
	fmt.Fprintf(stdout, "%d orders\n", n)
	return nil
}

// asV1 gives version 2's Error objects the type of version 1's, the same object in both
// documents, so that one apiError describes both.
func asV1(candidates ...*orderclientv2.Error) []*orderclient.Error {
	out := make([]*orderclient.Error, len(candidates))
	for i, e := range candidates {
		if e != nil {
			out[i] = &orderclient.Error{Code: orderclient.ErrorCode(e.Code), Message: e.Message, Status: e.Status}
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *[]T) []T {
	if p == nil {
		return nil
	}
	return *p
}

// isFind reports whether args start with the find subcommand, and the rest.
func isFind(args []string) (bool, []string) {
	if len(args) > 0 && strings.EqualFold(args[0], "find") {
		return true, args[1:]
	}
	return false, args
}
