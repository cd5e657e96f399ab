package webhook

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/order/orderjson"
)

// Observer is told of each attempt's outcome (delivered, failed, disabled) and of each
// delivered event's lag, the time from the change to its delivery; internal/metrics counts them.
type Observer interface {
	WebhookDelivery(outcome string)
	WebhookLag(d time.Duration)
}

// Config is what a Deliverer is made of; the zero durations and schedule are the defaults.
type Config struct {
	Store  Store
	Events order.EventLog
	Client *http.Client // nil: NewClient(false), which refuses addresses that are not public
	// Owner names this instance in the leases; "" picks a random one.
	Owner    string
	Timeout  time.Duration // bound on one attempt (10 s)
	LeaseTTL time.Duration // how long a lease lasts unrenewed (DefaultLeaseTTL): a stopped instance's endpoints wait that long
	// Poll is how often the endpoints are listed, to take the leases no one holds: 5 s, or a
	// third of LeaseTTL when that is shorter, so that a lapsed lease waits at most a third more.
	Poll     time.Duration
	Schedule Schedule     // DefaultSchedule when it has no Backoff
	Observer Observer     // none when nil
	Logger   *slog.Logger // none when nil
	Now      func() time.Time
}

// DefaultLeaseTTL is how long an endpoint's lease lasts unrenewed: a renewal, a write, every
// 10 s per endpoint, and the endpoints of an instance that died wait 30 s for another.
const DefaultLeaseTTL = 30 * time.Second

// Deliverer posts the log's events to the endpoints whose leases it holds.
type Deliverer struct {
	cfg Config
	mu  sync.Mutex
	// running are the endpoints this instance delivers to, each by a goroutine of its own.
	running map[string]bool
}

// pageSize is how many events of the log one read examines.
const pageSize = 100

// NewDeliverer returns a Deliverer of cfg; Run starts it.
func NewDeliverer(cfg Config) *Deliverer {
	cfg.Timeout = cmp.Or(cfg.Timeout, 10*time.Second)
	cfg.LeaseTTL = cmp.Or(cfg.LeaseTTL, DefaultLeaseTTL)
	cfg.Poll = cmp.Or(cfg.Poll, min(5*time.Second, cfg.LeaseTTL/3))
	if len(cfg.Schedule.Backoff) == 0 {
		cfg.Schedule = DefaultSchedule
	}
	if cfg.Client == nil {
		cfg.Client = NewClient(false)
	}
	if cfg.Owner == "" {
		b := make([]byte, 8)
		rand.Read(b) // never fails (crypto/rand)
		cfg.Owner = hex.EncodeToString(b)
	}
	if cfg.Observer == nil {
		cfg.Observer = noObserver{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Deliverer{cfg: cfg, running: map[string]bool{}}
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
		for _, e := range list {
			if e.Status != StatusActive || !d.start(e.ID) {
				continue
			}
			held, err := d.cfg.Store.Lease(ctx, e.ID, d.cfg.Owner, d.cfg.LeaseTTL)
			if !held || err != nil {
				d.stop(e.ID)
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer d.stop(e.ID)
				d.deliver(ctx, e.ID)
			}()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// start marks id as delivered to by this instance, unless it was.
func (d *Deliverer) start(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.running[id] {
		return false
	}
	d.running[id] = true
	return true
}

func (d *Deliverer) stop(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.running, id)
}

// deliver delivers to the endpoint id, whose lease it took, while it holds the lease and the
// endpoint is active; it renews the lease before each attempt and each wait. A lease that
// lapsed (a stall longer than it) ends the delivery, though no one holds it now: meanwhile
// another instance may have delivered or disabled the endpoint, and an operator enabled it,
// so the state read under it is old. The next poll takes the lease and reads the state anew.
func (d *Deliverer) deliver(ctx context.Context, id string) {
	log := d.cfg.Logger.With(slog.String("webhook", id))
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		d.cfg.Store.Release(rctx, id, d.cfg.Owner)
	}()
	e, err := d.cfg.Store.Get(ctx, id)
	if err != nil {
		return // deleted, or the store fails: the next poll tries again
	}
	w := worker{d: d, e: e, log: log}
	if w.key, err = SecretKey(e.Secret); err != nil {
		w.giveUp(ctx, err.Error())
		return
	}
	for ctx.Err() == nil && w.e.Status == StatusActive {
		at := d.cfg.Now()
		if err := d.cfg.Store.Renew(ctx, id, d.cfg.Owner, d.cfg.LeaseTTL); err != nil {
			return
		}
		w.leaseEnds = at.Add(d.cfg.LeaseTTL)
		if err := w.step(ctx); err != nil {
			if ctx.Err() == nil && !errors.Is(err, ErrLeaseLost) && !errors.Is(err, ErrNotFound) {
				log.Warn("webhooks: delivery stopped", slog.String("error", err.Error()))
			}
			return
		}
	}
}

// worker is one endpoint's delivery, on the goroutine that holds its lease.
type worker struct {
	d         *Deliverer
	e         Endpoint
	key       []byte
	log       *slog.Logger
	leaseEnds time.Time
	queue     []order.Event // read and not yet delivered, after e.Position
	queueLast string        // the position the queue's page read up to
}

// step does one thing, bounded by a third of the lease: an attempt, a read, or a wait.
func (w *worker) step(ctx context.Context) error {
	d := w.d
	renew := d.cfg.LeaseTTL / 3
	if wait := w.e.NextAttempt.Sub(d.cfg.Now()); wait > 0 {
		return sleep(ctx, min(wait, renew))
	}
	if len(w.queue) > 0 {
		return w.attempt(ctx, w.queue[0])
	}
	page, err := d.cfg.Events.Events(ctx, order.EventQuery{After: w.e.Position, Types: w.e.Types, Limit: pageSize})
	switch {
	case errors.Is(err, order.ErrEventsExpired):
		return w.giveUp(ctx, fmt.Sprintf("the log no longer keeps the events after %s: %v", w.e.Position, err))
	case err != nil:
		w.log.Warn("webhooks: the event log could not be read", slog.String("error", err.Error()))
		return sleep(ctx, renew)
	case len(page.Events) > 0:
		w.queue, w.queueLast = page.Events, page.Last
		return nil
	case page.Last != w.e.Position: // events of other types only: done with them
		w.e.Position = page.Last
		return w.save(ctx)
	}
	wctx, cancel := context.WithTimeout(ctx, renew)
	defer cancel()
	if err := d.cfg.Events.WaitForEvents(wctx, w.e.Position); err != nil && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
		return sleep(ctx, renew) // the log cannot be waited on now: read it again after a while
	}
	return nil
}

// attempt posts ev, and records the outcome.
func (w *worker) attempt(ctx context.Context, ev order.Event) error {
	d, now := w.d, w.d.cfg.Now()
	status, retryAfter, err := w.post(ctx, ev, now)
	if err != nil && ctx.Err() != nil {
		return ctx.Err() // shutting down cut the attempt: it does not count; the next holder repeats it
	}
	answered := d.cfg.Now() // a retry's wait counts from the answer, or from the timeout
	w.e.LastAttempt, w.e.LastStatus = now, status
	var outcome string
	switch {
	case err == nil && status >= 200 && status < 300:
		outcome = "delivered"
		w.queue = w.queue[1:]
		w.e.Position = ev.ID
		if len(w.queue) == 0 {
			w.e.Position = w.queueLast // past the events of other types that followed
		}
		w.e.Attempts, w.e.FirstFailure, w.e.NextAttempt, w.e.LastError = 0, time.Time{}, time.Time{}, ""
	case err == nil && status == http.StatusGone:
		outcome = "disabled"
		w.e.Status, w.e.LastError = StatusDisabled, "410 Gone: the receiver wants no more events"
		w.log.Warn("webhooks: endpoint disabled: it answered 410 Gone", slog.String("event", ev.ID))
	default:
		outcome = "failed"
		if err != nil {
			w.e.LastError = err.Error()
		} else {
			w.e.LastError = "HTTP " + strconv.Itoa(status)
		}
		w.e.Attempts++
		if w.e.FirstFailure.IsZero() {
			w.e.FirstFailure = now
		}
		if now.Sub(w.e.FirstFailure) >= d.cfg.Schedule.GiveUpAfter {
			w.e.Status = StatusFailing
			w.e.LastError = fmt.Sprintf("event %s: gave up after %d attempts since %s; the last: %s",
				ev.ID, w.e.Attempts, w.e.FirstFailure.UTC().Format(time.RFC3339), w.e.LastError)
			w.log.Warn("webhooks: endpoint failing", slog.String("error", w.e.LastError))
		} else {
			// A Retry-After longer than the schedule's wait is honoured, up to its longest.
			w.e.NextAttempt = answered.Add(max(d.cfg.Schedule.wait(w.e.Attempts), min(retryAfter, d.cfg.Schedule.longest())))
		}
	}
	// An answer is saved though the service is shutting down, lest the next holder repeat it.
	// Observers are told once it is saved: what they are told is what the store holds.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := w.save(sctx); err != nil {
		return err
	}
	d.cfg.Observer.WebhookDelivery(outcome)
	if outcome == "delivered" {
		d.cfg.Observer.WebhookLag(d.cfg.Now().Sub(ev.Time))
	}
	return nil
}

// post sends ev signed, and returns the answer's status and Retry-After (a date counted from
// the answer; 0 when none). The attempt ends before the lease does, so that no other instance can send while it runs.
func (w *worker) post(ctx context.Context, ev order.Event, now time.Time) (status int, retryAfter time.Duration, err error) {
	end := now.Add(w.d.cfg.Timeout)
	if w.leaseEnds.Before(end) {
		end = w.leaseEnds
	}
	ctx, cancel := context.WithDeadline(ctx, end)
	defer cancel()
	body := orderjson.AppendEvent(make([]byte, 0, 256), ev)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.e.URL, bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "orderd-webhooks")
	h.Set(HeaderID, ev.ID)
	h.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	h.Set(HeaderSignature, Sign(w.key, ev.ID, now, body))
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
			retryAfter = max(0, at.Sub(w.d.cfg.Now()))
		}
	}
	return resp.StatusCode, retryAfter, nil
}

// giveUp marks the endpoint failing for reason.
func (w *worker) giveUp(ctx context.Context, reason string) error {
	w.e.Status, w.e.LastError = StatusFailing, reason
	w.log.Warn("webhooks: endpoint failing", slog.String("error", reason))
	if err := w.save(ctx); err != nil {
		return err
	}
	w.d.cfg.Observer.WebhookDelivery("failed")
	return nil
}

func (w *worker) save(ctx context.Context) error {
	return w.d.cfg.Store.Save(ctx, w.e.ID, w.d.cfg.Owner, w.e.Delivery)
}

// sleep waits for d or for ctx's end.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

type noObserver struct{}

func (noObserver) WebhookDelivery(string)   {}
func (noObserver) WebhookLag(time.Duration) {}
