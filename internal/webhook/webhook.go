// Package webhook sends the order events to the endpoints operators register, signed as Standard
// Webhooks 1.0 says: endpoints, their leases, their Store, and the Deliverer (docs/design.md, Webhooks).
package webhook

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/orderjson"
)

// Status says whether an endpoint is delivered to; failing: it gave up on an event; disabled: 410 Gone.
type Status string

const (
	StatusActive   Status = "active"
	StatusFailing  Status = "failing"
	StatusDisabled Status = "disabled"
)

// Endpoint is a receiver of events, where its delivery stands, and who delivers to it.
type Endpoint struct {
	ID        string
	URL       string
	Types     []order.EventType // none: every type
	Secret    string            // whsec_…, shown once at creation
	CreatedAt time.Time
	Delivery
	LeaseOwner   string    // the instance that delivers to it,
	LeaseExpires time.Time // until then, by the store's clock (Deliverer.now)
}

// Delivery is an endpoint's state in the log, written only under its lease or by Enable.
type Delivery struct {
	Status Status
	// Position is the last event it is done with (delivered, or not of its types); at creation the log's newest.
	Position     string
	Attempts     int       // the failed attempts at the event after Position
	FirstFailure time.Time // the first of them
	NextAttempt  time.Time // zero: now
	LastAttempt  time.Time // zero: never
	LastStatus   int       // the HTTP status of the last attempt; 0 when it had none
	LastError    string    // why the last attempt or the endpoint failed; "" after a success
}

// Store keeps the endpoints, shared by every instance, under this package's rules (Lease, Hold, Enable).
// List returns them, the oldest first. Update calls change (maybe more than once) with the endpoint id as
// stored (zero: none) and stores what it leaves (no ID: none) atomically; or returns change's error.
type Store interface {
	List(ctx context.Context) ([]Endpoint, error)
	Update(ctx context.Context, id string, change func(*Endpoint) error) error
}

// Fields are Record's keys: an endpoint's Redis hash's fields, SQLite's columns (created_at) but the id.
var Fields = slices.Sorted(maps.Keys(Endpoint{}.Record()))

// createdLayout is the form of an endpoint's creation in the stores: SQLite's timestamps'.
const createdLayout = "2006-01-02T15:04:05.000000000Z"

// Record is e as the stores keep it: the creation in createdLayout, other times in Unix ns ("0": none).
func (e Endpoint) Record() map[string]string {
	nanos := func(t time.Time) string {
		if t.IsZero() {
			return "0"
		}
		return strconv.FormatInt(t.UnixNano(), 10)
	}
	return map[string]string{"url": e.URL, "types": JoinTypes(e.Types), "secret": e.Secret,
		"created": e.CreatedAt.UTC().Format(createdLayout), "status": string(e.Status), "position": e.Position,
		"attempts": strconv.Itoa(e.Attempts), "first_failure": nanos(e.FirstFailure), "next_attempt": nanos(e.NextAttempt),
		"last_attempt": nanos(e.LastAttempt), "last_status": strconv.Itoa(e.LastStatus), "last_error": e.LastError,
		"lease_owner": e.LeaseOwner, "lease_expires": nanos(e.LeaseExpires)}
}

// FromRecord is the endpoint id kept as Record's fields. Refusal: order.ErrCorrupt, with the ID alone.
func FromRecord(id string, field func(string) string) (Endpoint, error) {
	created, err := time.Parse(createdLayout, field("created"))
	errs := []error{err}
	integer := func(f string) int {
		n, err := strconv.Atoi(cmp.Or(field(f), "0"))
		errs = append(errs, err)
		return n
	}
	at := func(f string) time.Time {
		if n := integer(f); n != 0 {
			return time.Unix(0, int64(n)).UTC()
		}
		return time.Time{}
	}
	e := Endpoint{ID: id, URL: field("url"), Types: SplitTypes(field("types")), Secret: field("secret"), CreatedAt: created,
		LeaseOwner: field("lease_owner"), LeaseExpires: at("lease_expires"), Delivery: Delivery{
			Status: Status(field("status")), Position: field("position"), Attempts: integer("attempts"),
			FirstFailure: at("first_failure"), NextAttempt: at("next_attempt"), LastAttempt: at("last_attempt"),
			LastStatus: integer("last_status"), LastError: field("last_error")}}
	if err := errors.Join(errs...); err != nil || e.URL == "" {
		return Endpoint{ID: id}, fmt.Errorf("%w: webhook %s: %v", order.ErrCorrupt, id, err)
	}
	return e, nil
}

// The refusals of the rules; Enable's: ErrActive (its deliverer owns its state), ErrMoved.
var (
	ErrNotFound  = errors.New("no such webhook endpoint")
	ErrLeaseLost = errors.New("the webhook endpoint's lease is held by another instance")
	ErrActive    = errors.New("the webhook endpoint is already active")
	ErrMoved     = errors.New("the webhook endpoint's position changed meanwhile")
)

// JoinTypes is types comma-separated, as the stores keep them and webhooks list shows them.
func JoinTypes(types []order.EventType) string {
	s := make([]string, len(types))
	for i, t := range types {
		s[i] = string(t)
	}
	return strings.Join(s, ",")
}

// SplitTypes is the comma-separated types in s, each trimmed of spaces; none when s is "".
func SplitTypes(s string) (types []order.EventType) {
	for t := range strings.SplitSeq(s, ",") {
		if s != "" {
			types = append(types, order.EventType(strings.TrimSpace(t)))
		}
	}
	return types
}

// Lease takes the lease of the endpoint id for owner until now+ttl unless another owner holds
// it unexpired, and returns the endpoint under the lease. Refusals: ErrLeaseLost, ErrNotFound.
func Lease(ctx context.Context, s Store, id, owner string, ttl time.Duration, now time.Time) (leased Endpoint, err error) {
	err = update(ctx, s, id, func(e *Endpoint) error {
		if e.LeaseOwner != owner && e.LeaseExpires.After(now) {
			return fmt.Errorf("%w: %q", ErrLeaseLost, id)
		}
		e.LeaseOwner, e.LeaseExpires = owner, now.Add(ttl)
		leased = *e
		return nil
	})
	return leased, err
}

// Hold applies change to the endpoint id only while owner holds its lease, unexpired at now: once
// expired, another may have written it meanwhile. Refusals: ErrLeaseLost, ErrNotFound.
func Hold(ctx context.Context, s Store, id, owner string, now time.Time, change func(*Endpoint)) error {
	return update(ctx, s, id, func(e *Endpoint) error {
		if e.LeaseOwner != owner || !e.LeaseExpires.After(now) {
			return fmt.Errorf("%w: %q", ErrLeaseLost, id)
		}
		change(e)
		return nil
	})
}

// update is s.Update of an endpoint that exists.
func update(ctx context.Context, s Store, id string, change func(*Endpoint) error) error {
	return s.Update(ctx, id, func(e *Endpoint) error {
		if e.ID == "" {
			return fmt.Errorf("%w: %q", ErrNotFound, id)
		}
		return change(e)
	})
}

// Get returns the endpoint id. Refusal: ErrNotFound.
func Get(ctx context.Context, s Store, id string) (Endpoint, error) {
	list, err := s.List(ctx)
	if i := slices.IndexFunc(list, func(e Endpoint) bool { return e.ID == id }); i >= 0 && err == nil {
		return list[i], nil
	} else if err == nil {
		err = fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return Endpoint{}, err
}

// NewEndpoint checks rawURL and types and returns an active endpoint with a new id and secret,
// sent the events after position. Where the URL points is checked when dialed (NewClient).
func NewEndpoint(rawURL string, types []order.EventType, position string, now time.Time) (Endpoint, error) {
	u, err := url.Parse(rawURL)
	switch {
	case err != nil:
		return Endpoint{}, fmt.Errorf("webhook URL: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return Endpoint{}, fmt.Errorf("webhook URL %q: want http or https, not %q", rawURL, u.Scheme)
	case u.Hostname() == "":
		return Endpoint{}, fmt.Errorf("webhook URL %q: no host", rawURL)
	case u.User != nil:
		return Endpoint{}, fmt.Errorf("webhook URL %q: credentials in a URL are refused: they would be shown by webhooks list", rawURL)
	}
	if i := slices.IndexFunc(types, func(t order.EventType) bool { return !slices.Contains(order.EventTypes, t) }); i >= 0 {
		return Endpoint{}, fmt.Errorf("unknown event type %q (want one of %v)", types[i], order.EventTypes)
	}
	types = slices.Compact(slices.Sorted(slices.Values(types)))
	key := make([]byte, 32) // the spec asks 24 to 64 bytes
	rand.Read(key)          // never fails (crypto/rand)
	return Endpoint{
		ID: fmt.Sprintf("wh_%016x", mrand.Uint64()), URL: rawURL, Types: types, CreatedAt: now.UTC(),
		Secret: "whsec_" + base64.StdEncoding.EncodeToString(key), Delivery: Delivery{Status: StatusActive, Position: position},
	}, nil
}

// Create registers an endpoint for rawURL and types, sent the events after the log's newest.
func Create(ctx context.Context, s Store, log order.EventLog, rawURL string, types []order.EventType, now time.Time) (Endpoint, error) {
	position, err := log.LastEventID(ctx)
	e, invalid := NewEndpoint(rawURL, types, position, now)
	if err = cmp.Or(invalid, err); err != nil {
		return Endpoint{}, err
	}
	return e, s.Update(ctx, e.ID, func(stored *Endpoint) error { *stored = e; return nil }) // the id is 64 random bits: new
}

// Delete removes the endpoint id, leased or not: its holder's next write finds none. Refusal: ErrNotFound.
func Delete(ctx context.Context, s Store, id string) error {
	return update(ctx, s, id, func(e *Endpoint) error { *e = Endpoint{}; return nil })
}

// Backlog is how far an endpoint is behind the log: the events of its types after its position.
type Backlog struct {
	Events  int       // how many, up to 10,000
	More    bool      // there are more than Events
	Oldest  time.Time // the time of the first of them; zero when there is none
	Expired error     // the log's refusal: it no longer keeps the events after the position
}

// BacklogOf reads the log after e's position to say how far behind it is.
func BacklogOf(ctx context.Context, log order.EventLog, e Endpoint) (b Backlog, err error) {
	q, page := order.EventQuery{After: e.Position, Types: e.Types, Limit: 1000}, order.EventPage{More: true}
	for ; page.More && b.Events < 10_000; q.After = page.Last {
		if page, err = log.Events(ctx, q); errors.Is(err, order.ErrEventsExpired) {
			return Backlog{Expired: err}, nil
		} else if err != nil {
			return Backlog{}, err
		}
		if len(page.Events) > 0 && b.Oldest.IsZero() {
			b.Oldest = page.Events[0].Time
		}
		b.Events += len(page.Events)
	}
	b.More = page.More
	return b, nil
}

// Enabled is what Enable did.
type Enabled struct {
	From, To string // the position before, and the one delivery resumes after
	Backlog         // the events of its types after From: to send, or with skipToNewest skipped
}

// Enable makes the endpoint id active again from its position (order.ErrEventsExpired if the log
// dropped what follows), or with skipToNewest from the newest. Refusals: ErrNotFound, ErrActive, ErrMoved.
func Enable(ctx context.Context, s Store, log order.EventLog, id string, skipToNewest bool) (r Enabled, err error) {
	e, err := Get(ctx, s, id)
	if err == nil && e.Status == StatusActive {
		err = fmt.Errorf("%w: %q", ErrActive, id)
	}
	if err == nil {
		r.From, r.To = e.Position, e.Position
		r.Backlog, err = BacklogOf(ctx, log, e)
	}
	if err == nil && r.Expired != nil && skipToNewest { // count what is still kept: the dropped ones are gone uncounted
		r.Backlog, err = BacklogOf(ctx, log, Endpoint{Types: e.Types})
	}
	if err == nil && skipToNewest {
		r.To, err = log.LastEventID(ctx)
	} else if err == nil && r.Expired != nil {
		page, perr := log.Events(ctx, order.EventQuery{Limit: 1})
		kept := "it keeps none"
		if len(page.Events) > 0 {
			kept = "the oldest it keeps is " + page.Events[0].ID
		}
		err = cmp.Or(perr, fmt.Errorf("the log no longer keeps the events after position %s (%s): %w", e.Position, kept, r.Expired))
	}
	if err != nil {
		return Enabled{}, err
	}
	return r, update(ctx, s, id, func(e *Endpoint) error {
		switch {
		case e.Status == StatusActive:
			return fmt.Errorf("%w: %q", ErrActive, id)
		case e.Position != r.From:
			return fmt.Errorf("%w: %q", ErrMoved, id)
		}
		e.Delivery = Delivery{Status: StatusActive, Position: r.To, LastAttempt: e.LastAttempt, LastStatus: e.LastStatus}
		return nil
	})
}

// Observer is told of each attempt's outcome and each delivered event's lag; internal/metrics counts them.
type Observer interface {
	WebhookDelivery(outcome string)
	WebhookLag(d time.Duration)
}

// Config is what a Deliverer is made of; the zero values are the defaults.
type Config struct {
	Store    Store
	Events   order.EventLog
	Client   *http.Client  // NewClient(false): it refuses addresses that are not public
	Owner    string        // names this instance in the leases; a random name
	Timeout  time.Duration // bound on one attempt: 10 s
	LeaseTTL time.Duration // how long a lease lasts unrenewed, a dead instance's endpoints wait: DefaultLeaseTTL
	Poll     time.Duration // how often the endpoints are listed: 5 s, or LeaseTTL/3 if shorter (a lapsed lease waits a third more)
	Schedule Schedule      // DefaultSchedule, when it has no Backoff
	Observer Observer      // none when nil
	Logger   *slog.Logger
}

const DefaultLeaseTTL = 30 * time.Second

// Deliverer posts the log's events to the endpoints whose leases it holds.
type Deliverer struct {
	cfg     Config
	running sync.Map // the ids of the endpoints it delivers to, a goroutine each
}

func NewDeliverer(cfg Config) *Deliverer {
	cfg.Timeout = cmp.Or(cfg.Timeout, 10*time.Second)
	cfg.LeaseTTL = cmp.Or(cfg.LeaseTTL, DefaultLeaseTTL)
	cfg.Poll = cmp.Or(cfg.Poll, min(5*time.Second, cfg.LeaseTTL/3))
	cfg.Owner = cmp.Or(cfg.Owner, strconv.FormatUint(mrand.Uint64(), 36))
	cfg.Client = cmp.Or(cfg.Client, NewClient(false))
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if len(cfg.Schedule.Backoff) == 0 {
		cfg.Schedule = DefaultSchedule
	}
	return &Deliverer{cfg: cfg}
}

// Run leases the active endpoints no other instance holds and delivers to them; at ctx's end, lets go.
func (d *Deliverer) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for ; ctx.Err() == nil; sleep(ctx, d.cfg.Poll) {
		list, err := d.cfg.Store.List(ctx)
		if err != nil && ctx.Err() == nil { // an outage: the service warns of it, not each poll
			d.cfg.Logger.Debug("webhooks: the endpoints could not be listed", slog.String("error", err.Error()))
		}
		now := sync.OnceValue(func() time.Time { return d.now(ctx) }) // read if an active endpoint needs it: maybe a round trip
		for _, e := range list {
			if _, running := d.running.Load(e.ID); e.Status != StatusActive || running || e.LeaseOwner != d.cfg.Owner && e.LeaseExpires.After(now()) {
				continue
			}
			d.running.Store(e.ID, true)
			wg.Go(func() {
				defer d.running.Delete(e.ID)
				if leased, err := Lease(ctx, d.cfg.Store, e.ID, d.cfg.Owner, d.cfg.LeaseTTL, now()); err == nil {
					d.deliver(ctx, leased)
				}
			})
		}
	}
}

// now is the leases' clock: the store's when it has one (Redis's), else this machine's.
func (d *Deliverer) now(ctx context.Context) time.Time {
	if c, ok := d.cfg.Store.(interface {
		Now(context.Context) (time.Time, error)
	}); ok {
		if t, err := c.Now(ctx); err == nil {
			return t
		}
	}
	return time.Now()
}

// deliver delivers to e while it is active and the lease holds: each step follows a save that renews it.
func (d *Deliverer) deliver(ctx context.Context, e Endpoint) {
	w := worker{d: d, e: e, log: d.cfg.Logger.With(slog.String("webhook", e.ID))}
	var err error
	if w.signer, err = standardwebhooks.NewWebhook(e.Secret); err != nil {
		w.e.Status, w.e.LastError, w.outcome = StatusFailing, "webhook secret: "+err.Error(), "failed"
	}
	for ctx.Err() == nil && w.e.Status == StatusActive && w.save(ctx, d.cfg.LeaseTTL) == nil {
		w.step(ctx)
	}
	if w.e.Status != StatusActive { // failing or disabled: nothing more is sent to it until it is enabled
		w.log.Warn("webhooks: endpoint "+string(w.e.Status), slog.String("error", w.e.LastError))
	}
	// Though shutting down: another instance takes it at once, and does not repeat an attempt answered.
	w.save(context.WithoutCancel(ctx), 0)
}

// worker is one endpoint's delivery, on the goroutine that holds its lease.
type worker struct {
	d         *Deliverer
	e         Endpoint
	signer    *standardwebhooks.Webhook
	log       *slog.Logger
	leaseEnds time.Time       // by this machine's clock: an attempt ends before it
	outcome   string          // of the attempt not saved yet, told the observer once it is
	event     order.Event     // that attempt's
	page      order.EventPage // its Events: read and not yet delivered, after e.Position
}

// save writes the state, renews the lease for ttl (0: expires now), then tells the observer what it stored.
func (w *worker) save(ctx context.Context, ttl time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	at, now := time.Now(), w.d.now(ctx)
	err := Hold(ctx, w.d.cfg.Store, w.e.ID, w.d.cfg.Owner, now, func(e *Endpoint) { e.Delivery, e.LeaseExpires = w.e.Delivery, now.Add(ttl) })
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, ErrLeaseLost) && !errors.Is(err, ErrNotFound) {
			w.log.Warn("webhooks: delivery stopped", slog.String("error", err.Error()))
		}
		return err
	}
	w.leaseEnds = at.Add(ttl)
	if o := w.d.cfg.Observer; o != nil && w.outcome != "" {
		o.WebhookDelivery(w.outcome)
		if w.outcome == "delivered" {
			o.WebhookLag(time.Since(w.event.Time))
		}
	}
	w.outcome = ""
	return nil
}

// step does one thing, bounded by a third of the lease: an attempt, a read, or a wait.
func (w *worker) step(ctx context.Context) {
	third := w.d.cfg.LeaseTTL / 3
	if wait := time.Until(w.e.NextAttempt); wait > 0 {
		sleep(ctx, min(wait, third))
		return
	} else if len(w.page.Events) > 0 {
		w.attempt(ctx, w.page.Events[0])
		return
	}
	page, err := w.d.cfg.Events.Events(ctx, order.EventQuery{After: w.e.Position, Types: w.e.Types, Limit: 100})
	switch {
	case errors.Is(err, order.ErrEventsExpired): // fail, rather than skip events unseen
		w.e.Status, w.e.LastError, w.outcome = StatusFailing, fmt.Sprintf("the log no longer keeps the events after %s: %v", w.e.Position, err), "failed"
	case err != nil:
		w.log.Warn("webhooks: the event log could not be read", slog.String("error", err.Error()))
		sleep(ctx, third)
	case len(page.Events) > 0:
		w.page = page
	case page.Last != w.e.Position: // events of other types only: done with them
		w.e.Position = page.Last
	default:
		wctx, cancel := context.WithTimeout(ctx, third)
		defer cancel()
		if err := w.d.cfg.Events.WaitForEvents(wctx, w.e.Position); err != nil && wctx.Err() == nil {
			sleep(ctx, third) // the log cannot be waited on now: read it again after a while
		}
	}
}

func (w *worker) attempt(ctx context.Context, ev order.Event) {
	s, now := &w.e.Delivery, time.Now()
	status, retryAfter, err := w.post(ctx, ev, now)
	if err != nil && ctx.Err() != nil {
		return // shutting down cut the attempt: it does not count; the next holder repeats it
	}
	answered := time.Now() // a retry's wait counts from the answer, or from the timeout
	s.LastAttempt, s.LastStatus, s.LastError, w.event = now, status, "HTTP "+strconv.Itoa(status), ev
	if err != nil {
		s.LastError = err.Error()
	}
	switch sc := w.d.cfg.Schedule; {
	case err == nil && status/100 == 2:
		w.page.Events, s.Position = w.page.Events[1:], ev.ID
		if len(w.page.Events) == 0 {
			s.Position = w.page.Last // past the events of other types that followed
		}
		s.Attempts, s.FirstFailure, s.NextAttempt, s.LastError, w.outcome = 0, time.Time{}, time.Time{}, "", "delivered"
	case err == nil && status == http.StatusGone:
		s.Status, s.LastError, w.outcome = StatusDisabled, "410 Gone: the receiver wants no more events", "disabled"
	default:
		s.Attempts, s.FirstFailure, w.outcome = s.Attempts+1, cmp.Or(s.FirstFailure, now), "failed"
		if now.Sub(s.FirstFailure) >= sc.GiveUpAfter {
			s.Status, s.LastError = StatusFailing, fmt.Sprintf("event %s: gave up after %d attempts since %s; the last: %s",
				ev.ID, s.Attempts, s.FirstFailure.UTC().Format(time.RFC3339), s.LastError)
		} else { // a Retry-After longer than the schedule's wait is honoured, up to its longest
			s.NextAttempt = answered.Add(max(sc.wait(s.Attempts), min(retryAfter, slices.Max(sc.Backoff))))
		}
	}
}

// post sends ev signed; it ends before the lease does, so that no other instance can send meanwhile.
func (w *worker) post(ctx context.Context, ev order.Event, now time.Time) (status int, retryAfter time.Duration, err error) {
	ctx, cancel := context.WithDeadline(ctx, now.Add(min(w.d.cfg.Timeout, w.leaseEnds.Sub(now))))
	defer cancel()
	body := orderjson.AppendEvent(make([]byte, 0, 256), ev)
	signature, _ := w.signer.Sign(ev.ID, now, body) // an HMAC: never fails
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.e.URL, bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header = http.Header{"Content-Type": {"application/json"}, "User-Agent": {"orderd-webhooks"}, "Webhook-Id": {ev.ID},
		"Webhook-Timestamp": {strconv.FormatInt(now.Unix(), 10)}, "Webhook-Signature": {signature}}
	resp, err := w.d.cfg.Client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // so that the connection is reused
	// Retry-After is seconds or an HTTP-date (RFC 9110 §10.2.3); Standard Webhooks asks to honour it.
	if secs, err := strconv.ParseUint(resp.Header.Get("Retry-After"), 10, 32); err == nil {
		retryAfter = time.Duration(secs) * time.Second
	} else if at, err := http.ParseTime(resp.Header.Get("Retry-After")); err == nil {
		retryAfter = max(0, time.Until(at))
	}
	return resp.StatusCode, retryAfter, nil
}

func sleep(ctx context.Context, d time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	<-ctx.Done()
}

// Schedule says when a failed event is tried again, and when to give up on it. Not cenkalti/backoff:
// ours is an operator's list, jitter only lengthens a wait, and the attempts are saved with the endpoint.
type Schedule struct {
	Backoff     []time.Duration // Backoff[i] is the wait after the (i+1)-th failed attempt; the last one repeats
	GiveUpAfter time.Duration   // after the event's first failure: the endpoint is then marked failing
	Jitter      float64         // a random part up to this fraction of each wait, lest endpoints that failed together retry together
}

// DefaultSchedule: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, then every 2 h, for 24 h, each up to 10% longer.
var DefaultSchedule = Schedule{Backoff: []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute,
	10 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour}, GiveUpAfter: 24 * time.Hour, Jitter: 0.1}

// Check refuses a schedule that would never wait, or wait less after more failures.
func (s Schedule) Check() error {
	if len(s.Backoff) == 0 || slices.Min(s.Backoff) <= 0 || !slices.IsSorted(s.Backoff) || s.GiveUpAfter <= 0 {
		return fmt.Errorf("the retry schedule's waits must be positive and never decrease (not %v), and the time to give up positive (not %s)", s.Backoff, s.GiveUpAfter)
	}
	return nil
}

// wait is the wait after the attempts-th failed attempt (1 after the first).
func (s Schedule) wait(attempts int) time.Duration {
	d := s.Backoff[min(max(attempts, 1), len(s.Backoff))-1]
	return d + time.Duration(mrand.Float64()*s.Jitter*float64(d))
}
