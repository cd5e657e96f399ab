package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/redistest"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// webhookStores are the two stores the delivery tests run on: the arguments that name a new one.
var webhookStores = []struct {
	name  string
	store func(t *testing.T) []string
}{
	{"embedded", func(t *testing.T) []string { return []string{"--db", filepath.Join(t.TempDir(), "orderd.db")} }},
	{"redis", func(t *testing.T) []string {
		return []string{"--redis-url", redistest.Start(t).URL(), "--redis-prefix", redistest.Prefix(t)}
	}},
}

// posted is one request a receiver got, and what it answered.
type posted struct {
	id     string // webhook-id: the event's
	header http.Header
	body   []byte
	at     time.Time // when it arrived
	status int
}

// receiver stands for a webhook endpoint: it records each request as it arrives, and answers
// what answer says for the n-th (from 0); answer may block.
type receiver struct {
	*httptest.Server
	answer  func(n int, p posted) int
	mu      sync.Mutex
	got     []posted
	arrived chan struct{} // a signal per arrival or answer, dropped when one is pending
}

func newReceiver(t *testing.T, answer func(n int, p posted) int) *receiver {
	r := &receiver{answer: answer, arrived: make(chan struct{}, 1)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		p := posted{id: req.Header.Get("webhook-id"), header: req.Header.Clone(), body: body, at: time.Now()}
		r.mu.Lock()
		n := len(r.got)
		r.got = append(r.got, p)
		r.mu.Unlock()
		r.signal()
		status := r.answer(n, p)
		r.mu.Lock()
		r.got[n].status = status
		r.mu.Unlock()
		r.signal()
		w.WriteHeader(status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) signal() {
	select {
	case r.arrived <- struct{}{}:
	default:
	}
}

// posts returns what the receiver got so far.
func (r *receiver) posts() []posted {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// waitFor returns what the receiver got once done says it is enough, or fails the test after
// within.
func (r *receiver) waitFor(t *testing.T, within time.Duration, what string, done func([]posted) bool) []posted {
	t.Helper()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		if got := r.posts(); done(got) {
			return got
		}
		select {
		case <-r.arrived:
		case <-deadline.C:
			t.Fatalf("the receiver did not get %s within %s; it got %v", what, within, ids(r.posts()))
		}
	}
}

// answered is done when the receiver answered n requests.
func answered(n int) func([]posted) bool {
	return func(got []posted) bool {
		return len(got) >= n && !slices.ContainsFunc(got[:n], func(p posted) bool { return p.status == 0 })
	}
}

func ids(got []posted) []string {
	out := make([]string, len(got))
	for i, p := range got {
		out[i] = p.id
	}
	return out
}

// verifySigned fails the test unless each request is signed under secret as Standard Webhooks 1.0 says.
func verifySigned(t *testing.T, secret string, got []posted) {
	t.Helper()
	v, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range got {
		if err := v.Verify(p.body, p.header); err != nil {
			t.Errorf("the signature of %s: %v", p.id, err)
		}
		if !bytes.Contains(p.body, []byte(`"id":"`+p.id+`"`)) {
			t.Errorf("webhook-id %s, body %s", p.id, p.body)
		}
	}
}

// createWebhook registers url for every type with `orderd webhooks create`, and returns its
// id, its secret and the position it starts after.
func createWebhook(t *testing.T, url string, store []string) (id, secret, from string) {
	t.Helper()
	out, errOut := orderdProcess(t, append([]string{"webhooks", "create", "--url", url}, store...)...)
	id, secret, _ = strings.Cut(strings.TrimSpace(out), " ")
	_, from, _ = strings.Cut(errOut, "sent the events after ")
	from, _, _ = strings.Cut(from, ";")
	return id, secret, from
}

// logAfter returns the ids of the events base's log holds after position from.
func logAfter(t *testing.T, base, key, from string) []string {
	t.Helper()
	status, body := request(t, "GET", base, "/v2/store/events?after="+from, key)
	if status != 200 {
		t.Fatalf("the log after %s: %d %s", from, status, body)
	}
	var page struct {
		Events []struct {
			ID string `json:"id"`
		} `json:"events"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range page.Events {
		out = append(out, e.ID)
	}
	return out
}

// webhookRow waits until `orderd webhooks list` shows the endpoint id as ok says, and returns
// its columns: ID, URL, TYPES, STATUS, LAST, ATTEMPTS, then BEHIND and ERROR's words.
func webhookRow(t *testing.T, store []string, id, what string, ok func(row []string) bool) []string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		out, _ := orderdProcess(t, append([]string{"webhooks", "list"}, store...)...)
		for _, line := range strings.Split(out, "\n") {
			if row := strings.Fields(line); len(row) >= 7 && row[0] == id && ok(row) {
				return row
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhooks list did not show %s %s within 20 s:\n%s", id, what, out)
		}
	}
}

// caughtUp is a row of an active endpoint that has nothing left to send after a 2xx.
func caughtUp(row []string) bool {
	return row[3] == "active" && strings.HasPrefix(row[4], "2") && row[5] == "0" && row[6] == "0"
}

// cancelOrders cancels each order through base, each change an event.
func cancelOrders(t *testing.T, base, key string, orders ...string) {
	t.Helper()
	for _, o := range orders {
		if status, body := request(t, "DELETE", base, "/v1/store/orders/"+o, key); status != 204 {
			t.Fatalf("cancel %s: %d %s", o, status, body)
		}
	}
}

// orderdExit runs orderd with args as a process and returns its output and exit status.
func orderdExit(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := orderdCommand(args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// TestWebhookFailingThreeTimesThenSucceeding: a receiver that fails 3 times then succeeds
// gets every event, in the log's order, each once after its success: the first event four
// times (3 failures, 1 success), then the others, which waited behind it. The retries wait
// as --webhooks-retry says, the last wait repeating; every request is signed.
func TestWebhookFailingThreeTimesThenSucceeding(t *testing.T) {
	for _, mode := range webhookStores {
		t.Run(mode.name, func(t *testing.T) {
			store := mode.store(t)
			orderdProcess(t, append([]string{"import", "--orders", "../../testdata/demo/orders.json"}, store...)...)
			key := firstLine(orderdProcess(t, append([]string{"keys", "create", "--plan", "pro"}, store...)...))
			r := newReceiver(t, func(n int, _ posted) int {
				if n < 3 {
					return http.StatusServiceUnavailable
				}
				return http.StatusNoContent
			})
			id, secret, from := createWebhook(t, r.URL, store)
			base, _ := serveProcess(t, append(store, "--webhooks-allow-private", "--webhooks-retry", "300ms,600ms")...)

			cancelOrders(t, base, key, "2", "5", "7")
			events := logAfter(t, base, key, from)
			if len(events) != 3 {
				t.Fatalf("the log after %s: %v; want the 3 cancels", from, events)
			}
			r.waitFor(t, 30*time.Second, "6 answers", answered(6))
			// Nothing more once the endpoint's state says it is done: no event is sent again.
			webhookRow(t, store, id, "caught up", caughtUp)
			got := r.posts()
			want := []string{events[0], events[0], events[0], events[0], events[1], events[2]}
			if !slices.Equal(ids(got), want) {
				t.Fatalf("the receiver got %v; want %v", ids(got), want)
			}
			verifySigned(t, secret, got)
			for i, wait := range []time.Duration{300 * time.Millisecond, 600 * time.Millisecond, 600 * time.Millisecond} {
				if d := got[i+1].at.Sub(got[i].at); d < wait || d > wait+5*time.Second {
					t.Errorf("retry %d came %s after the failure; --webhooks-retry says %s (+10%% at most, and the time to post)", i+1, d, wait)
				}
			}
		})
	}
}

// TestWebhookOfAKilledInstanceCarriedOnByAnother: instance A holds the endpoint's lease and
// delivers; B, started after, cannot. A is killed with an attempt in flight. B takes the lease
// once it lapses (--webhooks-lease, and a third of it at most for B's poll), and delivers the
// event A had not finished and those made after the kill. Delivery is at least once: the
// receiver may get again exactly the event in flight at the kill, which A never recorded as
// delivered, and nothing else twice; nothing is lost, and the order holds.
func TestWebhookOfAKilledInstanceCarriedOnByAnother(t *testing.T) {
	const lease = 2 * time.Second
	for _, mode := range webhookStores {
		t.Run(mode.name, func(t *testing.T) {
			store := mode.store(t)
			orderdProcess(t, append([]string{"import", "--orders", "../../testdata/demo/orders.json"}, store...)...)
			key := firstLine(orderdProcess(t, append([]string{"keys", "create", "--plan", "pro"}, store...)...))
			inFlight, release := make(chan struct{}), make(chan struct{})
			r := newReceiver(t, func(n int, _ posted) int {
				if n == 2 { // the third request: held until A is dead
					close(inFlight)
					<-release
				}
				return http.StatusOK
			})
			releaseOnce := sync.OnceFunc(func() { close(release) })
			t.Cleanup(releaseOnce) // before the receiver closes, which waits for its requests
			id, secret, from := createWebhook(t, r.URL, store)
			flags := append(store, "--webhooks-allow-private", "--webhooks-lease", lease.String())

			a, procA := serveProcess(t, flags...)
			cancelOrders(t, a, key, "2")
			r.waitFor(t, 20*time.Second, "the first event, from A", answered(1))
			b, _ := serveProcess(t, flags...)
			cancelOrders(t, a, key, "5")
			r.waitFor(t, 20*time.Second, "the second event, from A", answered(2))
			made := time.Now() // A renews its lease after the change, before it posts
			cancelOrders(t, a, key, "7")
			select {
			case <-inFlight:
			case <-time.After(20 * time.Second):
				t.Fatal("the third event was not posted")
			}
			if err := procA.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			procA.Wait()
			killed := time.Now()
			releaseOnce() // its answer goes to a connection no one reads

			cancelOrders(t, b, key, "10", "12")
			events := logAfter(t, b, key, from)
			if len(events) != 5 {
				t.Fatalf("the log after %s: %v; want the 5 cancels", from, events)
			}
			r.waitFor(t, 30*time.Second, "6 answers", answered(6))
			webhookRow(t, store, id, "caught up", caughtUp)
			got := r.posts()
			want := []string{events[0], events[1], events[2], events[2], events[3], events[4]}
			if !slices.Equal(ids(got), want) {
				t.Fatalf("the receiver got %v; want %v: each event once, but the one in flight at the kill, which may come twice", ids(got), want)
			}
			verifySigned(t, secret, got)
			// B posted only once A's lease lapsed, and took it soon after.
			if again := got[3].at; again.Sub(made) < lease || again.Sub(killed) > lease+5*time.Second {
				t.Errorf("B posted the event in flight again %s after it was made and %s after the kill; want at least the lease, %s, after it was made, and soon after the lease lapsed",
					again.Sub(made), again.Sub(killed), lease)
			}
		})
	}
}

// TestWebhooksEnable: an endpoint that failed (--webhooks-give-up) is brought back by
// `webhooks enable` and gets the event it failed on, then the others; one disabled by a 410
// while the retention dropped the events after its position is refused, the gap named,
// unless --skip-to-newest, which sends only what comes after the log's newest.
func TestWebhooksEnable(t *testing.T) {
	for _, mode := range webhookStores {
		t.Run(mode.name, func(t *testing.T) {
			store := mode.store(t)
			orderdProcess(t, append([]string{"import", "--orders", "../../testdata/demo/orders.json"}, store...)...)
			key := firstLine(orderdProcess(t, append([]string{"keys", "create", "--plan", "pro"}, store...)...))
			var mu sync.Mutex
			answer := http.StatusServiceUnavailable
			setAnswer := func(status int) { mu.Lock(); answer = status; mu.Unlock() }
			r := newReceiver(t, func(int, posted) int { mu.Lock(); defer mu.Unlock(); return answer })
			id, secret, from := createWebhook(t, r.URL, store)
			enable := func(args ...string) (string, string, int) {
				return orderdExit(t, append(append([]string{"webhooks", "enable", id}, args...), store...)...)
			}
			if _, errOut, code := enable(); code != 2 || !strings.Contains(errOut, "already active") {
				t.Fatalf("enable of an active endpoint: exit %d, %q", code, errOut)
			}
			a, _ := serveProcess(t, append(store, "--webhooks-allow-private", "--webhooks-retry", "100ms", "--webhooks-give-up", "1s", "--webhooks-lease", "3s")...)

			cancelOrders(t, a, key, "2", "5")
			events := logAfter(t, a, key, from)
			webhookRow(t, store, id, "failing", func(row []string) bool { return row[3] == "failing" })
			failed := len(r.posts())
			setAnswer(http.StatusOK)
			out, errOut, code := enable()
			if code != 0 || !strings.Contains(out, "delivery resumes after "+from+", with 2 events") {
				t.Fatalf("enable of a failing endpoint: exit %d, %q, %q", code, out, errOut)
			}
			r.waitFor(t, 20*time.Second, "the two events after the enable", answered(failed+2))
			webhookRow(t, store, id, "caught up", caughtUp)
			got := r.posts()
			if !slices.Equal(ids(got[failed:]), events) || slices.ContainsFunc(got[:failed], func(p posted) bool { return p.id != events[0] }) {
				t.Fatalf("the receiver got %v; want %s until it failed, then %v", ids(got), events[0], events)
			}
			verifySigned(t, secret, got)

			// A 410 disables it at the next event; the two after it wait, and then the
			// retention of a new instance drops all but those two.
			setAnswer(http.StatusGone)
			cancelOrders(t, a, key, "7")
			webhookRow(t, store, id, "disabled", func(row []string) bool { return row[3] == "disabled" })
			cancelOrders(t, a, key, "10", "12")
			kept := logAfter(t, a, key, events[1])[1:]
			serveProcess(t, append(store, "--webhooks-allow-private", "--webhooks-lease", "3s", "--events-max", "2")...)
			webhookRow(t, store, id, "behind a gap", func(row []string) bool { return row[6] == "expired" })
			_, errOut, code = enable()
			if code != 2 || !strings.Contains(errOut, "no longer keeps the events after position "+events[1]) ||
				!strings.Contains(errOut, "the oldest it keeps is "+kept[0]) || !strings.Contains(errOut, "--skip-to-newest") {
				t.Fatalf("enable over a gap: exit %d, %q; want 2, naming the gap and --skip-to-newest", code, errOut)
			}
			webhookRow(t, store, id, "still disabled", func(row []string) bool { return row[3] == "disabled" })
			setAnswer(http.StatusOK)
			before := len(r.posts())
			out, errOut, code = enable("--skip-to-newest")
			if code != 0 || !strings.Contains(out, "from the log's newest event, "+kept[1]) || !strings.Contains(out, "skipped the events after "+events[1]+": 2 of its types") {
				t.Fatalf("enable --skip-to-newest: exit %d, %q, %q", code, out, errOut)
			}
			cancelOrders(t, a, key, "15")
			newest := logAfter(t, a, key, kept[1])
			r.waitFor(t, 20*time.Second, "the event after the newest", answered(before+1))
			webhookRow(t, store, id, "caught up", caughtUp)
			if got := r.posts()[before:]; !slices.Equal(ids(got), newest) {
				t.Fatalf("after enable --skip-to-newest the receiver got %v; want only %v", ids(got), newest)
			}
		})
	}
}
