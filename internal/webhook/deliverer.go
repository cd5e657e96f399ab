package webhook

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/orderjson"
)

// Observer is told of each attempt's outcome (delivered, failed, disabled) and of each
// delivered event's lag, the time from the change to its delivery; internal/metrics counts them.
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
	LeaseTTL time.Duration // how long a lease lasts unrenewed, a stopped instance's endpoints wait: DefaultLeaseTTL
	// Poll is how often the endpoints are listed, to take the leases no one holds: 5 s, or a
	// third of LeaseTTL when that is shorter, so that a lapsed lease waits at most a third more.
	Poll     time.Duration
	Schedule Schedule // DefaultSchedule, when it has no Backoff
	Observer Observer // none when nil
	Logger   *slog.Logger
}

// DefaultLeaseTTL: a renewal, a write, every 10 s per endpoint, and a dead instance's endpoints wait 30 s.
const DefaultLeaseTTL = 30 * time.Second

// Deliverer posts the log's events to the endpoints whose leases it holds.
type Deliverer struct {
	cfg     Config
	running sync.Map // the ids of the endpoints it delivers to, each by a goroutine of its own
}

// NewDeliverer returns a Deliverer of cfg; Run starts it.
func NewDeliverer(cfg Config) *Deliverer {
	cfg.Timeout = cmp.Or(cfg.Timeout, 10*time.Second)
	cfg.LeaseTTL = cmp.Or(cfg.LeaseTTL, DefaultLeaseTTL)
	cfg.Poll = cmp.Or(cfg.Poll, min(5*time.Second, cfg.LeaseTTL/3))
	cfg.Owner = cmp.Or(cfg.Owner, strconv.FormatUint(rand.Uint64(), 36))
	cfg.Client = cmp.Or(cfg.Client, NewClient(false))
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if len(cfg.Schedule.Backoff) == 0 {
		cfg.Schedule = DefaultSchedule
	}
	return &Deliverer{cfg: cfg}
}

// Run takes the lease of every active endpoint no other instance holds and delivers to it,
// until ctx ends; then it waits for the attempts in flight to end and releases its leases.
func (d *Deliverer) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	tick := time.NewTicker(d.cfg.Poll)
	defer tick.Stop()
	for {
		list, err := d.cfg.Store.List(ctx)
		if err != nil && ctx.Err() == nil { // an outage: the service warns of it, not each poll
			d.cfg.Logger.Debug("webhooks: the endpoints could not be listed", slog.String("error", err.Error()))
		}
		var now time.Time // read once an active endpoint needs it: a store's clock may be a round trip
		for _, e := range list {
			if e.Status != StatusActive {
				continue
			}
			if now.IsZero() {
				now = d.now(ctx)
			}
			if !free(e, d.cfg.Owner, now) {
				continue
			}
			if _, running := d.running.LoadOrStore(e.ID, true); running {
				continue
			}
			leased, held, err := Lease(ctx, d.cfg.Store, e.ID, d.cfg.Owner, d.cfg.LeaseTTL, now)
			if !held || err != nil {
				d.running.Delete(e.ID)
				continue
			}
			wg.Go(func() {
				defer d.running.Delete(e.ID)
				d.deliver(ctx, leased)
			})
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// hold applies change to the endpoint id while this instance's lease on it holds.
func (d *Deliverer) hold(ctx context.Context, id string, change func(*Endpoint)) error {
	return Hold(ctx, d.cfg.Store, id, d.cfg.Owner, d.now(ctx), change)
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

// deliver delivers to e, whose lease it took, while it holds the lease and e is active; it
// renews the lease before each attempt and each wait. A lease that lapsed (a stall longer
// than it) ends the delivery, though no one holds it now: meanwhile another instance may have
// delivered or disabled the endpoint, and an operator enabled it, so the state read under it
// is old. The next poll takes the lease and reads the state anew.
func (d *Deliverer) deliver(ctx context.Context, e Endpoint) {
	w := worker{d: d, e: e, log: d.cfg.Logger.With(slog.String("webhook", e.ID))}
	defer func() { // though shutting down: another instance takes it at once
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		d.hold(ctx, e.ID, func(e *Endpoint) { e.LeaseOwner, e.LeaseExpires = "", time.Time{} })
	}()
	var err error
	if w.signer, err = standardwebhooks.NewWebhook(e.Secret); err != nil {
		w.e.Status, w.e.LastError = StatusFailing, "webhook secret: "+err.Error()
		w.record(ctx, "failed", order.Event{})
		return
	}
	for ctx.Err() == nil && w.e.Status == StatusActive {
		at, now := time.Now(), d.now(ctx) // the attempt is cut by this machine's clock, the lease judged by the store's
		if err := Hold(ctx, d.cfg.Store, e.ID, d.cfg.Owner, now, func(e *Endpoint) { e.LeaseExpires = now.Add(d.cfg.LeaseTTL) }); err != nil {
			return
		}
		w.leaseEnds = at.Add(d.cfg.LeaseTTL)
		if err := w.step(ctx); err != nil {
			if ctx.Err() == nil && !errors.Is(err, ErrLeaseLost) && !errors.Is(err, ErrNotFound) {
				w.log.Warn("webhooks: delivery stopped", slog.String("error", err.Error()))
			}
			return
		}
	}
}

// worker is one endpoint's delivery, on the goroutine that holds its lease.
type worker struct {
	d         *Deliverer
	e         Endpoint
	signer    *standardwebhooks.Webhook
	log       *slog.Logger
	leaseEnds time.Time
	queue     []order.Event // read and not yet delivered, after e.Position
	queueLast string        // the position the queue's page read up to
}

// step does one thing, bounded by a third of the lease: an attempt, a read, or a wait.
func (w *worker) step(ctx context.Context) error {
	d, third := w.d, w.d.cfg.LeaseTTL/3
	if wait := time.Until(w.e.NextAttempt); wait > 0 {
		return sleep(ctx, min(wait, third))
	}
	if len(w.queue) > 0 {
		return w.attempt(ctx, w.queue[0])
	}
	page, err := d.cfg.Events.Events(ctx, order.EventQuery{After: w.e.Position, Types: w.e.Types, Limit: 100})
	switch {
	case errors.Is(err, order.ErrEventsExpired): // fail, rather than skip events unseen
		w.e.Status, w.e.LastError = StatusFailing, fmt.Sprintf("the log no longer keeps the events after %s: %v", w.e.Position, err)
		return w.record(ctx, "failed", order.Event{})
	case err != nil:
		w.log.Warn("webhooks: the event log could not be read", slog.String("error", err.Error()))
		return sleep(ctx, third)
	case len(page.Events) > 0:
		w.queue, w.queueLast = page.Events, page.Last
		return nil
	case page.Last != w.e.Position: // events of other types only: done with them
		w.e.Position = page.Last
		return w.d.hold(ctx, w.e.ID, func(e *Endpoint) { e.Delivery = w.e.Delivery })
	}
	wctx, cancel := context.WithTimeout(ctx, third)
	defer cancel()
	if err := d.cfg.Events.WaitForEvents(wctx, w.e.Position); err != nil && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
		return sleep(ctx, third) // the log cannot be waited on now: read it again after a while
	}
	return nil
}

// attempt posts ev, and records the outcome.
func (w *worker) attempt(ctx context.Context, ev order.Event) error {
	d, now, s := w.d, time.Now(), &w.e.Delivery
	status, retryAfter, err := w.post(ctx, ev, now)
	if err != nil && ctx.Err() != nil {
		return ctx.Err() // shutting down cut the attempt: it does not count; the next holder repeats it
	}
	answered := time.Now() // a retry's wait counts from the answer, or from the timeout
	s.LastAttempt, s.LastStatus = now, status
	switch {
	case err == nil && status/100 == 2:
		w.queue = w.queue[1:]
		s.Position = ev.ID
		if len(w.queue) == 0 {
			s.Position = w.queueLast // past the events of other types that followed
		}
		s.Attempts, s.FirstFailure, s.NextAttempt, s.LastError = 0, time.Time{}, time.Time{}, ""
		return w.record(ctx, "delivered", ev)
	case err == nil && status == http.StatusGone:
		s.Status, s.LastError = StatusDisabled, "410 Gone: the receiver wants no more events"
		w.log.Warn("webhooks: endpoint disabled: it answered 410 Gone", slog.String("event", ev.ID))
		return w.record(ctx, "disabled", ev)
	}
	s.LastError = "HTTP " + strconv.Itoa(status)
	if err != nil {
		s.LastError = err.Error()
	}
	s.Attempts++
	if s.FirstFailure.IsZero() {
		s.FirstFailure = now
	}
	if now.Sub(s.FirstFailure) >= d.cfg.Schedule.GiveUpAfter {
		s.Status = StatusFailing
		s.LastError = fmt.Sprintf("event %s: gave up after %d attempts since %s; the last: %s",
			ev.ID, s.Attempts, s.FirstFailure.UTC().Format(time.RFC3339), s.LastError)
	} else { // a Retry-After longer than the schedule's wait is honoured, up to its longest
		s.NextAttempt = answered.Add(max(d.cfg.Schedule.wait(s.Attempts), min(retryAfter, slices.Max(d.cfg.Schedule.Backoff))))
	}
	return w.record(ctx, "failed", ev)
}

// record saves the state, though the service is shutting down lest the next holder repeat an
// attempt answered, and then tells the observer of outcome: what it is told is what is stored.
func (w *worker) record(ctx context.Context, outcome string, ev order.Event) error {
	if w.e.Status == StatusFailing {
		w.log.Warn("webhooks: endpoint failing", slog.String("error", w.e.LastError))
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := w.d.hold(ctx, w.e.ID, func(e *Endpoint) { e.Delivery = w.e.Delivery }); err != nil {
		return err
	}
	if o := w.d.cfg.Observer; o != nil {
		o.WebhookDelivery(outcome)
		if outcome == "delivered" {
			o.WebhookLag(time.Since(ev.Time))
		}
	}
	return nil
}

// post sends ev signed, and returns the answer's status and Retry-After (a date counted from
// the answer; 0 when none). The attempt ends before the lease does, so that no other instance
// can send while it runs.
func (w *worker) post(ctx context.Context, ev order.Event, now time.Time) (status int, retryAfter time.Duration, err error) {
	ctx, cancel := context.WithDeadline(ctx, now.Add(min(w.d.cfg.Timeout, w.leaseEnds.Sub(now))))
	defer cancel()
	body := orderjson.AppendEvent(make([]byte, 0, 256), ev)
	signature, _ := w.signer.Sign(ev.ID, now, body) // an HMAC: never fails
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.e.URL, bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "orderd-webhooks")
	h.Set(standardwebhooks.HeaderWebhookID, ev.ID)
	h.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(now.Unix(), 10))
	h.Set(standardwebhooks.HeaderWebhookSignature, signature)
	resp, err := w.d.cfg.Client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // so that the connection is reused
	// Retry-After is seconds or an HTTP-date (RFC 9110 §10.2.3); Standard Webhooks asks for it
	// to be taken into account.
	if v := resp.Header.Get("Retry-After"); v != "" {
		if secs, err := strconv.ParseUint(v, 10, 32); err == nil {
			retryAfter = time.Duration(secs) * time.Second
		} else if at, err := http.ParseTime(v); err == nil {
			retryAfter = max(0, time.Until(at))
		}
	}
	return resp.StatusCode, retryAfter, nil
}

// sleep waits for d or for ctx's end.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// Schedule says when a failed event is tried again, and when to give up on it. Not
// github.com/cenkalti/backoff's: ours is an operator's list, its jitter only lengthens a wait,
// and its state (the attempts) is saved with the endpoint for whichever instance holds it next.
type Schedule struct {
	Backoff     []time.Duration // Backoff[i] is the wait after the (i+1)-th failed attempt; the last one repeats
	GiveUpAfter time.Duration   // after the event's first failure: the endpoint is then marked failing
	Jitter      float64         // a random part up to this fraction of each wait, lest endpoints that failed together retry together
}

// DefaultSchedule is 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, then every 2 h, for 24 h after
// the first failure of an event, each wait up to 10% longer at random: about 16 attempts.
var DefaultSchedule = Schedule{
	Backoff: []time.Duration{
		5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute,
		time.Hour, 2 * time.Hour,
	},
	GiveUpAfter: 24 * time.Hour,
	Jitter:      0.1,
}

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
	return d + time.Duration(rand.Float64()*s.Jitter*float64(d))
}
