package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/petstore/orderd/gen"
	"github.com/petstore/orderd/internal/api"
	"github.com/petstore/orderd/internal/api/apitest"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/ordertest"
	"github.com/petstore/orderd/internal/pagetoken"
	"github.com/petstore/orderd/internal/ratelimit"
	"github.com/petstore/orderd/internal/ratelimit/ratelimittest"
	"github.com/petstore/orderd/internal/sqlitestore"
)

// harness is the service on a real HTTP server, with a key per plan.
type harness struct {
	path     string // the SQLite file, which another handle may open, as another instance does
	srv      *httptest.Server
	contract *apitest.Contract
	key      string // a valid free-plan key
	keys     *sqlitestore.Keys
	events   *sqlitestore.Events
	clock    *ratelimittest.Clock // the time of the limiter and of the sunset
}

// testStart is 10:00:00 UTC, a whole minute ahead of it.
var testStart = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// testSecret is the page-token secret of the harness's server.
var testSecret = bytes.Repeat([]byte("s"), pagetoken.MinSecretLen)

var testSunset = api.Sunset{
	DeprecatedAt: time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC),
	SunsetAt:     time.Date(2027, 7, 1, 0, 0, 0, 0, time.UTC),
	Link:         "https://docs.petstore.example/migrate",
}

func newHarness(tb testing.TB, change ...func(*api.Config)) *harness {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "orderd.db")
	db := openDBAt(tb, path)
	pets := []order.Pet{{ID: 7, Name: "Rex", Status: order.PetAvailable}}
	if _, err := db.Import(context.Background(), ordertest.Fixture(), pets); err != nil {
		tb.Fatal(err)
	}
	keys := sqlitestore.NewKeys(db)
	h := &harness{path: path, contract: apitest.Load(tb), keys: keys, clock: ratelimittest.NewClock(testStart)}
	h.key = h.addKey(tb, "test-free", order.Free, order.Limits{})
	orders := sqlitestore.NewOrders(db)
	h.events = sqlitestore.NewEvents(db)
	tokens := pagetoken.For(string(testSecret), nil)
	cfg := api.Config{
		Orders: orders, Events: order.SharedWaits(h.events), PageTokens: tokens, // as the service gives it
		Pets: sqlitestore.NewPets(db), Keys: keys, Sunset: testSunset, Now: h.clock.Now,
		Limiter: ratelimit.NewMemory(h.clock.Now, ratelimit.DefaultBanPolicy),
	}
	for _, c := range change {
		c(&cfg)
	}
	handler, err := api.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	h.srv = httptest.NewServer(handler)
	tb.Cleanup(h.srv.Close)
	return h
}

// openDB opens a new SQLite file in tb.TempDir(), closed when the test ends.
func openDB(tb testing.TB) *sqlitestore.DB {
	tb.Helper()
	return openDBAt(tb, filepath.Join(tb.TempDir(), "orderd.db"))
}

// openDBAt opens the SQLite file at path, closed when the test ends.
func openDBAt(tb testing.TB, path string) *sqlitestore.DB {
	tb.Helper()
	db, err := sqlitestore.Open(path, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func (h *harness) addKey(tb testing.TB, name string, p order.Plan, custom order.Limits) string {
	tb.Helper()
	k, rec, err := order.NewKey(name, p, custom, time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	if err := h.keys.Add(context.Background(), rec); err != nil {
		tb.Fatal(err)
	}
	return k
}

// do sends a request with the given headers ("Name", "value", …) and checks the answer
// against the document of its version.
func (h *harness) do(tb testing.TB, method, path string, header ...string) (*http.Response, []byte) {
	tb.Helper()
	return h.contract.Do(tb, h.srv.Client(), h.request(tb, method, path, header...))
}

// request is a request to the harness's server with the given headers ("Name", "value", …).
func (h *harness) request(tb testing.TB, method, path string, header ...string) *http.Request {
	tb.Helper()
	req, err := http.NewRequest(method, h.srv.URL+path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	return req
}

// authed sends a request with the harness's valid key.
func (h *harness) authed(tb testing.TB, method, path string, header ...string) (*http.Response, []byte) {
	tb.Helper()
	return h.do(tb, method, path, append([]string{"Authorization", "Bearer " + h.key}, header...)...)
}

// wantError checks that an answer is the Error with the given status and code.
func wantError(tb testing.TB, res *http.Response, body []byte, status int, code gen.ErrorCode) gen.Error {
	tb.Helper()
	var e gen.Error
	if err := json.Unmarshal(body, &e); err != nil {
		tb.Fatalf("body is not an Error: %v: %s", err, body)
	}
	if res.StatusCode != status || e.Code != code || int(e.Status) != status || e.Message == "" {
		tb.Fatalf("got %d %+v, want %d %s", res.StatusCode, e, status, code)
	}
	return e
}
