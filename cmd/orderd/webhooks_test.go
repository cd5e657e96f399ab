package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/redistest"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// TestWebhooksCommands: create prints the id and the secret once, list shows the endpoint,
// delete removes it; mistakes are exit status 2 and leave no file behind.
func TestWebhooksCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "orderd.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"webhooks", "create", "--url", "ftp://a.example/", "--db", db}, "http or https"},
		{[]string{"webhooks", "create", "--db", db}, "webhook URL"},
		{[]string{"webhooks", "create", "--url", "https://a.example/", "--types", "order.deleted", "--db", db}, "order.deleted"},
		{[]string{"webhooks", "create", "--url", "https://a.example/", "extra", "--db", db}, "extra"},
		{[]string{"webhooks", "list", "--db", db}, "no such file"},
		{[]string{"webhooks", "delete", "--db", db}, "name one endpoint"},
		{[]string{"webhooks", "rename"}, "unknown subcommand"},
		{[]string{"webhooks"}, "want create, list, delete or enable"},
	} {
		if _, errOut, code := orderd(t, nil, tc.args...); code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}

	out, errOut, code := orderd(t, nil, "webhooks", "create", "--url", "https://a.example/hook", "--types", "order.cancelled, order.shipped", "--db", db)
	id, secret, _ := strings.Cut(strings.TrimSpace(out), " ")
	if code != 0 || !strings.HasPrefix(id, "wh_") || !strings.HasPrefix(secret, "whsec_") || !strings.Contains(errOut, "shown only this once") {
		t.Fatalf("webhooks create: exit %d, %q, %q", code, out, errOut)
	}
	out, _, code = orderd(t, nil, "webhooks", "list", "--db", db)
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "https://a.example/hook") ||
		!strings.Contains(out, "order.cancelled,order.shipped") || !strings.Contains(out, "active") || strings.Contains(out, secret) {
		t.Fatalf("webhooks list: exit %d:\n%s", code, out)
	}
	if out, _, code = orderd(t, nil, "webhooks", "delete", id, "--db", db); code != 0 || !strings.Contains(out, id) {
		t.Fatalf("webhooks delete: exit %d, %q", code, out)
	}
	if _, errOut, code = orderd(t, nil, "webhooks", "delete", id, "--db", db); code != 2 || !strings.Contains(errOut, "no such webhook") {
		t.Fatalf("webhooks delete again: exit %d, %q", code, errOut)
	}
	if out, _, _ = orderd(t, nil, "webhooks", "list", "--db", db); strings.Contains(out, id) {
		t.Fatalf("webhooks list after delete:\n%s", out)
	}
}

// TestServeDeliversWebhooks: an endpoint made by `orderd webhooks create` gets, from a served
// process, the cancel of an order, signed under the secret create printed.
func TestServeDeliversWebhooks(t *testing.T) {
	type received struct {
		header http.Header
		body   []byte
	}
	got := make(chan received, 10)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- received{r.Header, body}
	}))
	t.Cleanup(receiver.Close)

	for _, mode := range []struct {
		name  string
		store func(t *testing.T) []string
	}{
		{"embedded", func(t *testing.T) []string { return []string{"--db", filepath.Join(t.TempDir(), "orderd.db")} }},
		{"redis", func(t *testing.T) []string {
			return []string{"--redis-url", redistest.Start(t).URL(), "--redis-prefix", redistest.Prefix(t)}
		}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			store := mode.store(t)
			orderdProcess(t, append([]string{"import", "--orders", "../../testdata/demo/orders.json"}, store...)...)
			key := firstLine(orderdProcess(t, append([]string{"keys", "create", "--plan", "pro"}, store...)...))
			id, secret, _ := strings.Cut(firstLine(orderdProcess(t, append([]string{"webhooks", "create", "--url", receiver.URL, "--types", "order.cancelled"}, store...)...)), " ")
			base, _ := serveProcess(t, append(store, "--webhooks-allow-private")...)

			if status, body := request(t, "DELETE", base, "/v1/store/orders/2", key); status != 204 {
				t.Fatalf("cancel: %d %s", status, body)
			}
			var r received
			select {
			case r = <-got:
			case <-time.After(20 * time.Second):
				t.Fatal("no webhook within 20 s")
			}
			if !strings.Contains(string(r.body), `"type":"order.cancelled"`) || !strings.Contains(string(r.body), `"id":2,`) {
				t.Fatalf("webhook body %s", r.body)
			}
			v, err := standardwebhooks.NewWebhook(secret)
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Verify(r.body, r.header); err != nil {
				t.Fatalf("the webhook's signature: %v", err)
			}
			// list shows the delivery once the deliverer saved it; it is saved just after the answer.
			for deadline := time.Now().Add(10 * time.Second); ; {
				out, _ := orderdProcess(t, append([]string{"webhooks", "list"}, store...)...)
				if strings.Contains(out, id) && strings.Contains(out, "  200  ") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("webhooks list after the delivery:\n%s", out)
				}
			}
		})
	}
}
