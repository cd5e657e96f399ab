package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/petstore/orderd/examples/client/orderclient"
)

// runWith is run with the doer given, so that tests can make its waits instant.
func runWith(ctx context.Context, doer orderclient.HttpRequestDoer, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	client, err := orderclient.NewClientWithResponses(strings.TrimRight(o.base, "/")+"/v1",
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
			res.JSON400, res.JSON401, res.JSON404, res.JSON409, res.JSON429, res.JSON500, res.JSON503, res.JSONDefault))
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
			res.JSON400, res.JSON401, res.JSON429, res.JSON500, res.JSON503, res.JSONDefault))
	}
	for _, o := range *res.JSON200 {
		fmt.Fprintf(stdout, "%d %s %d %d %s\n", o.Id, o.Status, o.PetId, o.Quantity, o.ShipDate.UTC().Format(time.RFC3339Nano))
	}
	fmt.Fprintf(stdout, "%d orders\n", len(*res.JSON200))
	return nil
}
