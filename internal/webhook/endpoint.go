// Package webhook sends the log of order events to the endpoints operators register, signed
// as Standard Webhooks 1.0 says: the Endpoint, the rules of its lease and state, the Store that
// keeps it, and the Deliverer each instance runs (docs/design.md, Webhooks).
package webhook

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/petstore/orderd/internal/order"
)

// Status says whether an endpoint is delivered to: active; failing, it gave up on an event
// (its retries ran out, or the log no longer keeps it), its state kept; or disabled, its
// receiver answered 410 Gone.
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
	// The instance that delivers to it, until LeaseExpires by the store's clock (Redis's, or SQLite's machine's).
	LeaseOwner   string
	LeaseExpires time.Time
}

// Delivery is an endpoint's state in the log, written only under its lease or by Enable.
type Delivery struct {
	Status Status
	// Position is the id of the last event the endpoint is done with: delivered, or not of its
	// types. It starts at the log's newest when the endpoint is created.
	Position string
	// Attempts are the failed attempts at the event after Position; FirstFailure the first of them.
	Attempts     int
	FirstFailure time.Time
	NextAttempt  time.Time // zero: now
	LastAttempt  time.Time // zero: never
	LastStatus   int       // the HTTP status of the last attempt; 0 when it had none
	LastError    string    // why the last attempt or the endpoint failed; "" after a success
}

// Store keeps the endpoints, shared by every instance. The rules of who may write what are
// this package's (Lease, Hold, Enable): a store only keeps endpoints and changes one atomically.
type Store interface {
	// List returns every endpoint, the oldest first.
	List(ctx context.Context) ([]Endpoint, error)
	// Get returns the endpoint id. Refusal: ErrNotFound.
	Get(ctx context.Context, id string) (Endpoint, error)
	// Update calls change with the endpoint id as stored (the zero Endpoint when there is none)
	// and stores what it leaves (none: an ID left empty), in one step no other write to the
	// endpoint comes into. When change returns an error, nothing is written and Update returns
	// it. change may be called more than once.
	Update(ctx context.Context, id string, change func(*Endpoint) error) error
}

// Fields name what the stores keep of an endpoint besides its id, in the order of Record's
// values: the fields of its Redis hash, the columns of SQLite's table (created is created_at).
var Fields = []string{"url", "types", "secret", "created", "status", "position", "attempts",
	"first_failure", "next_attempt", "last_attempt", "last_status", "last_error", "lease_owner", "lease_expires"}

// Record is e as the stores keep it, a string per field: the types comma-separated, the times
// in Unix nanoseconds ("0" for none).
func (e Endpoint) Record() []string {
	nanos := func(t time.Time) string {
		if t.IsZero() {
			return "0"
		}
		return strconv.FormatInt(t.UnixNano(), 10)
	}
	return []string{e.URL, JoinTypes(e.Types), e.Secret, nanos(e.CreatedAt), string(e.Status), e.Position,
		strconv.Itoa(e.Attempts), nanos(e.FirstFailure), nanos(e.NextAttempt), nanos(e.LastAttempt),
		strconv.Itoa(e.LastStatus), e.LastError, e.LeaseOwner, nanos(e.LeaseExpires)}
}

// FromRecord is the endpoint id a store keeps as r (Record); a number missing is 0, as the
// lease's are in a Redis hash written before leases were kept there. Refusal: order.ErrCorrupt.
func FromRecord(id string, r []string) (Endpoint, error) {
	var errs []error
	integer := func(i int) int {
		n, err := strconv.Atoi(cmp.Or(r[i], "0"))
		errs = append(errs, err)
		return n
	}
	at := func(i int) time.Time {
		if n := integer(i); n != 0 {
			return time.Unix(0, int64(n)).UTC()
		}
		return time.Time{}
	}
	e := Endpoint{ID: id, URL: r[0], Types: SplitTypes(r[1]), Secret: r[2], CreatedAt: at(3), LeaseOwner: r[12],
		LeaseExpires: at(13), Delivery: Delivery{Status: Status(r[4]), Position: r[5], Attempts: integer(6),
			FirstFailure: at(7), NextAttempt: at(8), LastAttempt: at(9), LastStatus: integer(10), LastError: r[11]}}
	if err := errors.Join(errs...); err != nil || e.URL == "" || e.CreatedAt.IsZero() {
		return Endpoint{}, fmt.Errorf("%w: webhook %s: %v", order.ErrCorrupt, id, err)
	}
	return e, nil
}

// The refusals of the rules. Enable refuses an active endpoint (ErrActive: its deliverer owns
// its state) and one whose position changed since it was checked (ErrMoved).
var (
	ErrNotFound  = errors.New("no such webhook endpoint")
	ErrLeaseLost = errors.New("the webhook endpoint's lease is held by another instance")
	ErrActive    = errors.New("the webhook endpoint is already active")
	ErrMoved     = errors.New("the webhook endpoint's position changed meanwhile")
	errHeld      = errors.New("the webhook endpoint's lease is held")
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

// Lease takes the lease of the endpoint id for owner until now+ttl, when no other owner holds
// it unexpired (owner's own is renewed), and returns the endpoint as it stands under the lease;
// false when another holds it. Refusal: ErrNotFound.
func Lease(ctx context.Context, s Store, id, owner string, ttl time.Duration, now time.Time) (Endpoint, bool, error) {
	var leased Endpoint
	err := update(ctx, s, id, func(e *Endpoint) error {
		if !free(*e, owner, now) {
			return errHeld
		}
		e.LeaseOwner, e.LeaseExpires = owner, now.Add(ttl)
		leased = *e
		return nil
	})
	if errors.Is(err, errHeld) {
		return Endpoint{}, false, nil
	}
	return leased, err == nil, err
}

// free reports whether owner may take e's lease at now.
func free(e Endpoint, owner string, now time.Time) bool {
	return e.LeaseOwner == owner || !e.LeaseExpires.After(now)
}

// Hold applies change to the endpoint id only while owner holds its lease, unexpired at now.
// A lease that expired is lost though no one took it: meanwhile another may have taken it,
// written and released it, so what owner read under it may be old. Refusals: ErrLeaseLost,
// ErrNotFound.
func Hold(ctx context.Context, s Store, id, owner string, now time.Time, change func(*Endpoint)) error {
	return update(ctx, s, id, func(e *Endpoint) error {
		if e.LeaseOwner != owner || !e.LeaseExpires.After(now) {
			return fmt.Errorf("%w: %q", ErrLeaseLost, id)
		}
		change(e)
		return nil
	})
}

// update is s.Update of an endpoint that exists. Refusal: ErrNotFound.
func update(ctx context.Context, s Store, id string, change func(*Endpoint) error) error {
	return s.Update(ctx, id, func(e *Endpoint) error {
		if e.ID == "" {
			return fmt.Errorf("%w: %q", ErrNotFound, id)
		}
		return change(e)
	})
}

// NewEndpoint checks rawURL and types and returns an active endpoint with a new id and secret,
// delivered the events after position (the log's newest, for a new endpoint). Where the URL
// points is checked when it is dialed (NewClient): a name may resolve elsewhere by then.
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
	for _, t := range types {
		if !slices.Contains(order.EventTypes, t) {
			return Endpoint{}, fmt.Errorf("unknown event type %q (want one of %v)", t, order.EventTypes)
		}
	}
	if len(types) > 0 {
		types = slices.Compact(slices.Sorted(slices.Values(types)))
	}
	id, key := make([]byte, 8), make([]byte, 32) // the spec asks 24 to 64 bytes of key
	rand.Read(id)                                // never fails (crypto/rand)
	rand.Read(key)
	return Endpoint{
		ID: "wh_" + hex.EncodeToString(id), URL: rawURL, Types: types, CreatedAt: now.UTC(),
		Secret: "whsec_" + base64.StdEncoding.EncodeToString(key), Delivery: Delivery{Status: StatusActive, Position: position},
	}, nil
}

// Create registers an endpoint for rawURL and types, delivered the events after the log's
// newest: those of changes made from now on.
func Create(ctx context.Context, s Store, log order.EventLog, rawURL string, types []order.EventType, now time.Time) (Endpoint, error) {
	e, err := NewEndpoint(rawURL, types, "", now)
	if err != nil {
		return Endpoint{}, err
	}
	if e.Position, err = log.LastEventID(ctx); err != nil {
		return Endpoint{}, err
	}
	return e, s.Update(ctx, e.ID, func(stored *Endpoint) error {
		if stored.ID != "" {
			return fmt.Errorf("webhook %s: the id is taken", e.ID)
		}
		*stored = e
		return nil
	})
}

// Delete removes the endpoint id, though an instance holds its lease: its next write finds
// none. Refusal: ErrNotFound.
func Delete(ctx context.Context, s Store, id string) error {
	return update(ctx, s, id, func(e *Endpoint) error {
		*e = Endpoint{}
		return nil
	})
}

// Backlog is how far an endpoint is behind the log: the events of its types after its position.
type Backlog struct {
	Events  int       // how many, up to 10,000
	More    bool      // there are more than Events
	Oldest  time.Time // the time of the first of them; zero when there is none
	Expired error     // the log's refusal: it no longer keeps the events after the position
}

// BacklogOf reads the log after e's position to say how far behind it is.
func BacklogOf(ctx context.Context, log order.EventLog, e Endpoint) (Backlog, error) {
	var b Backlog
	q := order.EventQuery{After: e.Position, Types: e.Types, Limit: 1000}
	for b.Events < 10_000 {
		page, err := log.Events(ctx, q)
		if errors.Is(err, order.ErrEventsExpired) {
			return Backlog{Expired: err}, nil
		}
		if err != nil {
			return Backlog{}, err
		}
		if len(page.Events) > 0 && b.Oldest.IsZero() {
			b.Oldest = page.Events[0].Time
		}
		b.Events += len(page.Events)
		if !page.More {
			return b, nil
		}
		q.After = page.Last
	}
	b.More = true
	return b, nil
}

// Enabled is what Enable did.
type Enabled struct {
	From, To string // the position before, and the one delivery resumes after
	// The events of its types after From: to be sent; with skipToNewest, skipped, those the log
	// still keeps (those it dropped are not counted).
	Backlog
}

// Enable makes the failing or disabled endpoint id active again, its attempts and failure
// cleared (its last attempt and status kept, as history). Delivery resumes after its position,
// the event it failed on first, when the log still keeps the events after it; otherwise Enable
// refuses with order.ErrEventsExpired, unless skipToNewest, which moves the position to the
// log's newest: nothing before it is sent. The write checks again that the endpoint is not
// active (a deliverer owns an active one's state) and that its position is the one checked.
// Refusals: ErrNotFound, ErrActive, ErrMoved, order.ErrEventsExpired.
func Enable(ctx context.Context, s Store, log order.EventLog, id string, skipToNewest bool) (Enabled, error) {
	e, err := s.Get(ctx, id)
	if err != nil {
		return Enabled{}, err
	}
	if e.Status == StatusActive {
		return Enabled{}, fmt.Errorf("%w: %q", ErrActive, id)
	}
	r := Enabled{From: e.Position, To: e.Position}
	b, err := BacklogOf(ctx, log, e)
	switch {
	case err != nil:
		return Enabled{}, err
	case skipToNewest:
		if b.Expired != nil { // count what is still kept: the dropped ones are gone uncounted
			if b, err = BacklogOf(ctx, log, Endpoint{Types: e.Types}); err != nil {
				return Enabled{}, err
			}
		}
		if r.To, err = log.LastEventID(ctx); err != nil {
			return Enabled{}, err
		}
	case b.Expired != nil:
		oldest, err := log.Events(ctx, order.EventQuery{Limit: 1})
		if err != nil {
			return Enabled{}, err
		}
		kept := "it keeps none"
		if len(oldest.Events) > 0 {
			kept = "the oldest it keeps is " + oldest.Events[0].ID
		}
		return Enabled{}, fmt.Errorf("the log no longer keeps the events after position %s (%s): %w", e.Position, kept, b.Expired)
	}
	r.Backlog = b
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
