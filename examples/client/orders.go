package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/petstore/orderd/examples/client/orderclient"
)

// runWith is run with the doer given, so that tests can make its waits instant.
func runWith(ctx context.Context, doer orderclient.HttpRequestDoer, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	client, err := orderclient.NewClientWithResponses(o.base,
		orderclient.WithHTTPClient(doer),
		orderclient.WithRequestEditorFn(bearer(o.key)),
	)
	if err != nil {
		return usageError{fmt.Sprintf("--base %q: %v", o.base, err)}
	}
	if o.hasCancel {
		if err := cancel(ctx, client, o.cancel, stdout); err != nil {
			return err
		}
	}
	return list(ctx, client, stdout)
}

// bearer sends the key the way the API's security scheme asks for it.
func bearer(key string) orderclient.RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+key)
		return nil
	}
}

// cancel cancels order id. Only 204 is success: cancelling is idempotent, so an order that
// was already cancelled answers 204 too.
func cancel(ctx context.Context, client *orderclient.ClientWithResponses, id int64, stdout io.Writer) error {
	res, err := client.CancelOrderWithResponse(ctx, id)
	if err != nil {
		return fmt.Errorf("cancel order %d: %w", id, err)
	}
	if res.StatusCode() != http.StatusNoContent {
		return fmt.Errorf("cancel order %d: %w", id, apiError(res.HTTPResponse, res.Body,
			res.JSON400, res.JSON401, res.JSON404, res.JSON409, res.JSON429, res.JSON500, res.JSON503))
	}
	fmt.Fprintf(stdout, "cancelled order %d\n", id)
	return nil
}

// list prints every order, one line each, and then how many there are.
func list(ctx context.Context, client *orderclient.ClientWithResponses, stdout io.Writer) error {
	res, err := client.ListOrdersWithResponse(ctx, nil)
	if err != nil {
		return fmt.Errorf("list orders: %w", err)
	}
	if res.StatusCode() != http.StatusOK || res.JSON200 == nil {
		return fmt.Errorf("list orders: %w", apiError(res.HTTPResponse, res.Body,
			res.JSON400, res.JSON401, res.JSON429, res.JSON500, res.JSON503))
	}
	for _, o := range *res.JSON200 {
		fmt.Fprintf(stdout, "%s %s %s %s %s\n", int64Text(o.Id), statusText(o.Status),
			int64Text(o.PetId), int32Text(o.Quantity), timeText(o.ShipDate))
	}
	fmt.Fprintf(stdout, "%d orders\n", len(*res.JSON200))
	return nil
}

// The schema marks no field of Order required, so the generated fields are pointers; the
// service always sends all six, and "-" shows it if one ever goes missing.

func int64Text(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}

func int32Text(v *int32) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(int64(*v), 10)
}

func statusText(v *orderclient.OrderStatus) string {
	if v == nil {
		return "-"
	}
	return string(*v)
}

func timeText(v *time.Time) string {
	if v == nil {
		return "-"
	}
	return v.UTC().Format(time.RFC3339Nano)
}
